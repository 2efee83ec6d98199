// SPDX-License-Identifier: BSD-3-Clause
#include "ring_blocks.hpp"

#include "../pacing.hpp"

#include <algorithm>
#include <optional>

namespace hashi::coll::algo {

namespace {

// What one chain in flight holds.
struct Slot {
    int chain = -1;
    int next = 0; // the slot's next chain: slot i runs chains i, i + window, ...
    std::size_t step = 0;
    Schedule steps;
    Scratch temp;
    std::vector<MPI_Request> requests;
};

int run_reduces(const Step& st, MPI_Datatype type, MPI_Op op)
{
    for (const LocalReduce& r : st.reduces) {
        if (r.count == 0)
            continue;
        if (const int rc = PMPI_Reduce_local(r.in, r.inout, r.count, type, op); rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

int mod(int a, int p)
{
    return ((a % p) + p) % p;
}

} // namespace

WireType::WireType(MPI_Datatype type) : type_(type)
{
    for (MPI_Datatype pair : {MPI_DOUBLE_INT, MPI_LONG_INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT})
        if (type == pair && pair != MPI_DATATYPE_NULL) {
            if (PMPI_Type_dup(type, &dup_) != MPI_SUCCESS || PMPI_Type_commit(&dup_) != MPI_SUCCESS)
                dup_ = MPI_DATATYPE_NULL;
            return;
        }
}

WireType::~WireType()
{
    if (dup_ != MPI_DATATYPE_NULL)
        PMPI_Type_free(&dup_);
}

int run_chains(
    MPI_Comm comm, MPI_Datatype type, MPI_Op op, int chains, int window, MPI_Aint temp_elems, const ChainBuilder& build)
{
    if (chains <= 0)
        return MPI_SUCCESS;
    window = std::clamp(window, 1, chains);
    const WireType wire(type);
    std::vector<Slot> slots(static_cast<std::size_t>(window));
    for (int i = 0; i < window; ++i) {
        slots[static_cast<std::size_t>(i)].next = i;
        slots[static_cast<std::size_t>(i)].temp = Scratch(type, temp_elems);
    }

    // Posts the current step of s; steps with nothing to transfer (all
    // blocks empty) run their reductions at once and are passed over.
    auto post = [&](Slot& s) -> int {
        const int tag = s.chain % window;
        for (; s.step < s.steps.size(); ++s.step) {
            const Step& st = s.steps[s.step];
            s.requests.clear();
            // Receives first, so a peer's eager send finds its buffer.
            for (int pass = 0; pass < 2; ++pass) {
                for (const Transfer& x : st.transfers) {
                    if (x.count == 0 || x.send != (pass == 1))
                        continue;
                    MPI_Request r;
                    const int rc = x.send ? PMPI_Isend(x.buf, x.count, wire.get(), x.peer, tag, comm, &r)
                                          : PMPI_Irecv(x.buf, x.count, wire.get(), x.peer, tag, comm, &r);
                    if (rc != MPI_SUCCESS)
                        return rc;
                    s.requests.push_back(r);
                }
            }
            if (!s.requests.empty())
                return MPI_SUCCESS;
            if (const int rc = run_reduces(st, type, op); rc != MPI_SUCCESS)
                return rc;
        }
        return MPI_SUCCESS;
    };
    // Starts the slot's next chains until one has something in flight.
    // A chain waits for the one `window` before it (not for any free slot),
    // so the two chains of a tag are never in flight together on any rank.
    auto start = [&](Slot& s) -> int {
        s.requests.clear();
        while (s.next < chains) {
            s.chain = s.next;
            s.next += window;
            s.steps.clear();
            s.step = 0;
            build(s.chain, s.temp.data(), s.steps);
            if (const int rc = post(s); rc != MPI_SUCCESS)
                return rc;
            if (!s.requests.empty())
                return MPI_SUCCESS;
        }
        s.chain = -1;
        return MPI_SUCCESS;
    };

    for (Slot& s : slots)
        if (const int rc = start(s); rc != MPI_SUCCESS)
            return rc;

    std::vector<MPI_Request> all;
    std::vector<int> indices;
    for (;;) {
        all.clear();
        for (const Slot& s : slots)
            all.insert(all.end(), s.requests.begin(), s.requests.end());
        if (all.empty())
            return MPI_SUCCESS;
        indices.resize(all.size());
        int done = 0;
        if (const int rc =
                PMPI_Waitsome(static_cast<int>(all.size()), all.data(), &done, indices.data(), MPI_STATUSES_IGNORE);
            rc != MPI_SUCCESS)
            return rc;
        // Hand the requests back (completed ones are MPI_REQUEST_NULL now)
        // and advance every slot whose step is complete.
        std::size_t k = 0;
        for (Slot& s : slots) {
            bool complete = true;
            for (MPI_Request& r : s.requests) {
                r = all[k++];
                complete = complete && r == MPI_REQUEST_NULL;
            }
            if (s.requests.empty() || !complete)
                continue;
            if (const int rc = run_reduces(s.steps[s.step], type, op); rc != MPI_SUCCESS)
                return rc;
            ++s.step;
            s.requests.clear();
            if (const int rc = post(s); rc != MPI_SUCCESS)
                return rc;
            if (s.requests.empty())
                if (const int rc = start(s); rc != MPI_SUCCESS)
                    return rc;
        }
    }
}

void ring_reduce_scatter(Schedule& s, const std::vector<int>& ranks, int pos, const std::vector<Block>& blocks,
    void* buf, void* temp, const TypeInfo& ti)
{
    const int p = static_cast<int>(ranks.size());
    if (p < 2)
        return;
    const int next = ranks[mod(pos + 1, p)], prev = ranks[mod(pos - 1, p)];
    // At step k I pass on block pos-k-1 and add my part to block pos-k-2,
    // which my predecessor passes on; the last block I add to is my own.
    for (int k = 0; k < p - 1; ++k) {
        const Block& out = blocks[mod(pos - k - 1, p)];
        const Block& in = blocks[mod(pos - k - 2, p)];
        Step st;
        st.transfers.push_back({next, element(buf, ti, out.begin), out.count, true});
        st.transfers.push_back({prev, temp, in.count, false});
        st.reduces.push_back({temp, element(buf, ti, in.begin), in.count});
        s.push_back(std::move(st));
    }
}

void ring_allgather(Schedule& s, const std::vector<int>& ranks, int pos, const std::vector<Block>& blocks, void* buf,
    const TypeInfo& ti)
{
    const int p = static_cast<int>(ranks.size());
    if (p < 2)
        return;
    const int next = ranks[mod(pos + 1, p)], prev = ranks[mod(pos - 1, p)];
    for (int k = 0; k < p - 1; ++k) {
        const Block& out = blocks[mod(pos - k, p)];
        const Block& in = blocks[mod(pos - k - 1, p)];
        Step st;
        st.transfers.push_back({next, element(buf, ti, out.begin), out.count, true});
        st.transfers.push_back({prev, element(buf, ti, in.begin), in.count, false});
        s.push_back(std::move(st));
    }
}

void ring_allreduce(
    Schedule& s, const std::vector<int>& peers, int me, Block b, void* buf, void* temp, const TypeInfo& ti)
{
    const int n = static_cast<int>(peers.size());
    std::vector<Block> blocks(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        const auto [pb, pe] = piece(b.count, n, i);
        blocks[static_cast<std::size_t>(i)] = {b.begin + pb, pe - pb};
    }
    ring_reduce_scatter(s, peers, me, blocks, buf, temp, ti);
    ring_allgather(s, peers, me, blocks, buf, ti);
}

void exchange_reduce(
    Schedule& s, const std::vector<int>& peers, int me, Block b, void* buf, void* temp, const TypeInfo& ti)
{
    const int n = static_cast<int>(peers.size());
    if (n < 2 || b.count == 0)
        return;
    void* mine = element(buf, ti, b.begin);
    auto copy_of = [&](int c) -> void* {
        return c == me ? mine : element(temp, ti, static_cast<MPI_Aint>(c < me ? c : c - 1) * b.count);
    };
    Step st;
    for (int c = 0; c < n; ++c)
        if (c != me) {
            st.transfers.push_back({peers[c], copy_of(c), b.count, false});
            st.transfers.push_back({peers[c], mine, b.count, true});
        }
    // x0 op (x1 op (... op x[n-1])) on every peer: floating point sums then
    // agree bit for bit across the clusters. The operands of one op may be
    // swapped (the op is commutative); only the grouping must not change.
    void* acc = copy_of(n - 1);
    for (int c = n - 2; c >= 0; --c) {
        if (c == me) {
            st.reduces.push_back({acc, mine, b.count});
            acc = mine;
        } else {
            st.reduces.push_back({copy_of(c), acc, b.count});
        }
    }
    s.push_back(std::move(st));
}

Pipeline pipeline(const Tuning& t)
{
    const std::size_t seg = t.segment_bytes ? t.segment_bytes : default_segment_bytes;
    return {seg, static_cast<int>(std::clamp<std::size_t>(pipeline_bytes / seg, 2, 16))};
}

int start_in_recvbuf(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, const Hierarchy& h, bool& work)
{
    work = false;
    if (count <= 0)
        return MPI_SUCCESS;
    if (sendbuf != MPI_IN_PLACE)
        if (const int rc = copy_elements(sendbuf, recvbuf, count, type); rc != MPI_SUCCESS)
            return rc;
    int size = 0;
    PMPI_Type_size(type, &size);
    work = h.size > 1 && size > 0;
    return MPI_SUCCESS;
}

namespace {

// Where the data of one cluster lives during a hierarchical allreduce.
// Lane group j (j < L) is the ranks at lane positions j, j+L, j+2L, ...;
// its lane (position j) does the WAN phase on piece j of the segment, the
// others hold sub-pieces of it in the intra-cluster phases.
struct LaneLayout {
    int lanes = 1; // L
    int q = 1; // ranks in my cluster
    std::vector<int> ring; // my cluster's ranks, node by node
    int ring_pos = 0;
    int my_lane = 0; // my position in h.lanes[my_cluster]

    LaneLayout(const Hierarchy& h, const Tuning& t)
        : lanes(std::clamp(t.wan_senders, 1, std::max(1, h.min_cluster_size))),
          q(h.my_cluster_size()),
          ring(h.members[h.my_cluster]),
          my_lane(h.lane_of[h.rank])
    {
        // Ranks of one node next to each other: the intra-cluster ring then
        // crosses each node's NIC once in each direction.
        std::stable_sort(ring.begin(), ring.end(), [&](int a, int b) { return h.node_of[a] < h.node_of[b]; });
        ring_pos = static_cast<int>(std::find(ring.begin(), ring.end(), h.rank) - ring.begin());
    }

    // The block of the rank at lane position lp in the segment [begin, begin+count).
    Block block(MPI_Aint begin, int count, int lp) const
    {
        const int j = lp % lanes, k = lp / lanes;
        const int group = (q - j + lanes - 1) / lanes;
        const auto [pb, pe] = piece(count, lanes, j);
        const auto [sb, se] = piece(pe - pb, group, k);
        return {begin + pb + sb, se - sb};
    }
    Block lane_piece(MPI_Aint begin, int count, int j) const
    {
        const auto [pb, pe] = piece(count, lanes, j);
        return {begin + pb, pe - pb};
    }
};

} // namespace

int hier_allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, const Hierarchy& h,
    const Tuning& t, Pipeline pipe, const WanPhase& wan)
{
    bool work;
    if (const int rc = start_in_recvbuf(sendbuf, recvbuf, count, type, h, work); rc != MPI_SUCCESS || !work)
        return rc;
    const TypeInfo ti = type_info(type);

    const LaneLayout lay(h, t);
    const int L = lay.lanes, S = h.nclusters, c = h.my_cluster;
    const auto& lanes = h.lanes[c];
    const bool is_lane = lay.my_lane < L;
    const int j = lay.my_lane % L;
    std::vector<int> wan_peers;
    for (int x = 0; x < S; ++x)
        wan_peers.push_back(h.lanes[x][j]);

    // Segments of whole elements; one segment without pipelining.
    MPI_Aint seg = count;
    if (pipe.segment_bytes > 0)
        seg = std::clamp<MPI_Aint>(static_cast<MPI_Aint>(pipe.segment_bytes) / ti.size, 1, count);
    const int chains = static_cast<int>((count + seg - 1) / seg);
    // Every block a step receives lies inside one lane piece (at most
    // ceil(seg / L) elements); the exchange of matsuda takes S - 1 of them.
    const MPI_Aint temp_elems = (seg + L - 1) / L * std::max(1, S - 1);

    auto build = [&](int chain, void* temp, Schedule& s) {
        const MPI_Aint begin = chain * seg;
        const int n = static_cast<int>(std::min<MPI_Aint>(seg, count - begin));
        std::vector<Block> blocks(lay.ring.size());
        for (std::size_t i = 0; i < blocks.size(); ++i)
            blocks[i] = lay.block(begin, n, h.lane_of[lay.ring[i]]);
        ring_reduce_scatter(s, lay.ring, lay.ring_pos, blocks, recvbuf, temp, ti);

        // Lane group members hand their reduced sub-pieces to their lane
        // and get the finished ones back after the WAN phase.
        Step gather, scatter;
        if (!is_lane) {
            const Block mine = lay.block(begin, n, lay.my_lane);
            gather.transfers.push_back({lanes[j], element(recvbuf, ti, mine.begin), mine.count, true});
            scatter.transfers.push_back({lanes[j], element(recvbuf, ti, mine.begin), mine.count, false});
        } else {
            for (int lp = j + L; lp < lay.q; lp += L) {
                const Block b = lay.block(begin, n, lp);
                gather.transfers.push_back({lanes[lp], element(recvbuf, ti, b.begin), b.count, false});
                scatter.transfers.push_back({lanes[lp], element(recvbuf, ti, b.begin), b.count, true});
            }
        }
        s.push_back(std::move(gather));
        if (is_lane)
            wan(s, wan_peers, c, lay.lane_piece(begin, n, j), recvbuf, temp, ti);
        s.push_back(std::move(scatter));
        ring_allgather(s, lay.ring, lay.ring_pos, blocks, recvbuf, ti);
    };

    std::optional<WanShare> share;
    if (S > 1 && is_lane)
        share.emplace(h, L);
    return run_chains(h.comm, type, op, chains, pipe.window, temp_elems, build);
}

} // namespace hashi::coll::algo
