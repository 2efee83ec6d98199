// SPDX-License-Identifier: BSD-3-Clause
// Matsuda et al. 2006 broadcast (van de Geijn's scatter + allgather,
// modified for the WAN), run as a pipelined data flow so that its phases
// overlap: with node links the bottleneck, a broadcast can only approach
// n / B_node if every node link is busy all the time.
//
// The message is cut into segments. In the root's cluster, segment s has an
// owner, one of the ranks other than the root: the root sends the segment
// to its owner only, and the owner passes it on to the other ranks of the
// cluster (the scatter + allgather, per segment). So the root sends each
// byte once, and the owners share the rest evenly: all node links carry
// about n, none 2n. The first Lf owners (Lf <= t.wan_senders) are also the
// WAN senders: every segment crosses once to each other cluster, from one
// of them to a receiver there, who passes it to the rest of its cluster.
// When there are fewer senders than owners, the senders own fewer segments
// to make up for what they send across. Receivers take the segments round
// robin; a cluster with more ranks than senders uses all but one of its
// ranks, so that with Lf = q - 1 receiver k gets exactly sender k's
// segments (one steady stream per WAN connection) and none forwards more
// than n.
//
// Every rank posts its receives ahead for a window of segments and
// forwards each segment as soon as it has it. All the work is on a byte
// image of the message (its bytes as MPI packs them), so segment
// boundaries agree on all ranks even when they describe the buffer with
// different datatypes; it is the user's buffer for contiguous types.
#include "../algorithms.hpp"
#include "../datatype.hpp"
#include "../pacing.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <numeric>
#include <optional>
#include <vector>

namespace hashi::coll::algo {

namespace {

constexpr int tag_segment = 0x4b00; // + segment % window
constexpr std::size_t default_segment = 256 * 1024;
// Below this many bytes per owner, cutting the message further only adds
// messages.
constexpr MPI_Count min_split_segment = 8 * 1024;
constexpr MPI_Count segment_align = 64;
// Segments are sent with an int count of bytes.
constexpr MPI_Count max_segment = 1 << 30;

// Who sends segment s to whom. Built alike on every rank from the
// hierarchy and the root.
class Flow {
public:
    Flow(const Hierarchy& h, int root, int wan_senders) : h_(h), root_(root), root_cluster_(h.cluster_of[root])
    {
        for (int r : h.lanes[root_cluster_])
            if (r != root)
                owners_.push_back(r);
        if (owners_.empty()) {
            senders_.push_back(root);
            owner_of_.push_back(-1);
            sender_of_.push_back(root);
        } else {
            const int lf = std::max(1, std::min<int>(wan_senders, static_cast<int>(owners_.size())));
            senders_.assign(owners_.begin(), owners_.begin() + lf);
            schedule();
        }
        const int lf = static_cast<int>(senders_.size());
        receivers_.resize(h.nclusters);
        for (int c = 0; c < h.nclusters; ++c) {
            const int q = h.cluster_size(c);
            receivers_[c] = lf >= q ? q : std::max(lf, q - 1);
        }
    }

    int owners() const { return static_cast<int>(owners_.size()); }
    int wan_senders() const { return static_cast<int>(senders_.size()); }
    bool is_wan_sender(int r) const { return std::find(senders_.begin(), senders_.end(), r) != senders_.end(); }
    int largest_fanout() const { return h_.max_cluster_size + h_.nclusters; }

    // The rank that sends me segment s, or -1 at the root.
    int source(MPI_Count s) const
    {
        const int me = h_.rank;
        if (me == root_)
            return -1;
        if (h_.my_cluster == root_cluster_) {
            const int o = owner(s);
            return me == o ? root_ : o;
        }
        const int r = receiver(h_.my_cluster, s);
        return me == r ? sender(s) : r;
    }

    // The ranks I pass segment s on to, WAN first (its latency is longest).
    void destinations(MPI_Count s, std::vector<int>& out) const
    {
        out.clear();
        const int me = h_.rank;
        if (h_.my_cluster == root_cluster_) {
            if (me == sender(s))
                for (int c = 0; c < h_.nclusters; ++c)
                    if (c != root_cluster_)
                        out.push_back(receiver(c, s));
            if (me == root_) {
                if (!owners_.empty())
                    out.push_back(owner(s));
            } else if (me == owner(s)) {
                for (int r : owners_)
                    if (r != me)
                        out.push_back(r);
            }
        } else if (me == receiver(h_.my_cluster, s)) {
            for (int r : h_.members[h_.my_cluster])
                if (r != me)
                    out.push_back(r);
        }
    }

private:
    // Which owner gets which share of the segments. A WAN sender forwards
    // (S - 1) / Lf of the message across besides passing its own segments
    // to the m - 1 other owners, so when there are fewer WAN senders than
    // owners (Lf < m) the senders own fewer segments: every owner then
    // sends about (m + S - 2) / m of the message, none more. In units of
    // 1 / (m * Lf): an owner that is not a sender gets A * Lf, a sender
    // A * Lf - (S - 1) * m, with A = m + S - 2. A sender sends its own
    // segments across, the others' segments go round robin over the
    // senders. The schedule repeats with a period of a few hundred
    // segments at most.
    void schedule()
    {
        const long m = static_cast<long>(owners_.size()), lf = static_cast<long>(senders_.size());
        const long wan = h_.nclusters - 1, a = m + wan - 1;
        std::vector<long> weight(m);
        for (long i = 0; i < m; ++i)
            weight[i] = i < lf ? std::max(0L, a * lf - wan * m) : a * lf;
        long sum = 0, g = 0;
        for (long w : weight)
            g = std::gcd(g, w);
        for (long& w : weight)
            sum += (w = g ? w / g : 1);
        constexpr long max_period = 256;
        if (sum > max_period) {
            const long old_sum = sum;
            sum = 0;
            for (long& w : weight)
                sum += (w = w ? std::max(1L, w * max_period / old_sum) : 0);
        }
        // Smooth weighted round robin, so an owner's segments are spread
        // out rather than bunched; repeated Lf times so the segments that
        // non-senders own divide evenly among the senders.
        std::vector<long> credit(m, 0);
        long next_sender = 0;
        for (long k = 0; k < sum * lf; ++k) {
            long best = -1;
            for (long i = 0; i < m; ++i) {
                credit[i] += weight[i];
                if (weight[i] > 0 && (best < 0 || credit[i] > credit[best]))
                    best = i;
            }
            credit[best] -= sum;
            owner_of_.push_back(owners_[best]);
            sender_of_.push_back(best < lf ? senders_[best] : senders_[next_sender++ % lf]);
        }
    }

    int owner(MPI_Count s) const { return owner_of_[s % owner_of_.size()]; }
    int sender(MPI_Count s) const { return sender_of_[s % sender_of_.size()]; }
    int receiver(int c, MPI_Count s) const { return h_.lanes[c][s % receivers_[c]]; }

    const Hierarchy& h_;
    int root_;
    int root_cluster_;
    std::vector<int> owners_; // the root cluster's ranks but the root, in lane order
    std::vector<int> senders_; // the WAN senders
    std::vector<int> receivers_; // cluster -> how many of its lanes receive from the WAN
    std::vector<int> owner_of_; // segment % period -> its owner
    std::vector<int> sender_of_; // segment % period -> its WAN sender
};

// Runs the flow of `nseg` segments of `seg` bytes (the last one shorter)
// over the n-byte image.
int run_flow(char* image, MPI_Count n, MPI_Count seg, const Flow& flow, const Hierarchy& h)
{
    const MPI_Count nseg = (n + seg - 1) / seg;
    // Enough segments in flight to keep every owner busy, bounded so a large
    // message does not post thousands of requests.
    const int window = static_cast<int>(std::min<MPI_Count>(nseg, std::clamp(2 * flow.owners(), 16, 64)));
    const int per = 1 + flow.largest_fanout(); // requests per slot: the receive, then the sends

    struct Slot {
        MPI_Count seg = -1;
        int pending = 0;
        bool have = false; // received (or the root's own)
    };
    std::vector<Slot> slots(window);
    std::vector<MPI_Request> reqs(static_cast<std::size_t>(window) * per, MPI_REQUEST_NULL);
    std::vector<int> done(reqs.size());
    std::vector<int> dest;

    auto bytes = [&](MPI_Count s) { return static_cast<int>(std::min(seg, n - s * seg)); };
    auto tag = [&](MPI_Count s) { return tag_segment + static_cast<int>(s % window); };
    auto forward = [&](MPI_Count s) {
        const int k = static_cast<int>(s % window);
        slots[k].have = true;
        flow.destinations(s, dest);
        for (std::size_t i = 0; i < dest.size(); ++i) {
            const int err = PMPI_Isend(image + s * seg, bytes(s), MPI_BYTE, dest[i], tag(s), h.comm,
                &reqs[static_cast<std::size_t>(k) * per + 1 + i]);
            if (err != MPI_SUCCESS)
                return err;
            ++slots[k].pending;
        }
        return MPI_SUCCESS;
    };
    auto open = [&](MPI_Count s) {
        const int k = static_cast<int>(s % window);
        slots[k] = Slot {s, 0, false};
        const int src = flow.source(s);
        if (src < 0)
            return forward(s);
        slots[k].pending = 1;
        return PMPI_Irecv(
            image + s * seg, bytes(s), MPI_BYTE, src, tag(s), h.comm, &reqs[static_cast<std::size_t>(k) * per]);
    };

    // Segments [lo, hi) are open; a segment's slot is reused only once all
    // of its operations completed, so two messages with one tag between
    // two ranks are always sent and received in the same order.
    MPI_Count lo = 0, hi = 0;
    int err = MPI_SUCCESS;
    while (err == MPI_SUCCESS) {
        while (lo < hi && slots[lo % window].have && slots[lo % window].pending == 0)
            ++lo;
        if (lo == nseg)
            break;
        while (hi < nseg && hi < lo + window && err == MPI_SUCCESS)
            err = open(hi++);
        if (err != MPI_SUCCESS)
            break;
        if (slots[lo % window].have && slots[lo % window].pending == 0)
            continue;
        int count = 0;
        err = PMPI_Waitsome(static_cast<int>(reqs.size()), reqs.data(), &count, done.data(), MPI_STATUSES_IGNORE);
        if (err == MPI_SUCCESS && count == MPI_UNDEFINED)
            err = MPI_ERR_INTERN; // open segments without operations: a bug in the flow
        for (int i = 0; err == MPI_SUCCESS && i < count; ++i) {
            const int k = done[i] / per;
            --slots[k].pending;
            if (done[i] % per == 0)
                err = forward(slots[k].seg);
        }
    }
    return err;
}

} // namespace

int bcast_matsuda(void* buf, int count, MPI_Datatype type, int root, const Hierarchy& h, const Tuning& t)
{
    const TypeInfo ti = type_info(type);
    const MPI_Count n = static_cast<MPI_Count>(count) * ti.size;
    if (n == 0 || h.size == 1)
        return MPI_SUCCESS;
    if (root < 0 || root >= h.size)
        return MPI_ERR_ROOT;

    const Flow flow(h, root, t.wan_senders);

    // Segments: the tuning's size, but small enough that every owner gets
    // one, and never so small that it is all overhead. They are cut from
    // the bytes of the type signature, not from whole elements of the local
    // type: ranks may use different datatypes of one signature, and their
    // segments must agree. Multiples of 64 bytes keep them aligned for the
    // usual element sizes.
    MPI_Count seg = static_cast<MPI_Count>(t.segment_bytes ? t.segment_bytes : default_segment);
    const MPI_Count share = (n + std::max(1, flow.owners()) - 1) / std::max(1, flow.owners());
    seg = std::min({seg, std::max(share, min_split_segment), max_segment});
    if (seg > segment_align)
        seg -= seg % segment_align;

    // The image: the user's buffer, or a packed copy of it.
    const bool direct = bytes_are_memory(type);
    std::unique_ptr<char[]> packed;
    char* image = static_cast<char*>(buf) + ti.true_lb;
    int err = MPI_SUCCESS;
    if (!direct) {
        packed.reset(new char[n]);
        image = packed.get();
        MPI_Count pos = 0;
        if (h.rank == root)
            err = PMPI_Pack_c(buf, count, type, image, n, &pos, MPI_COMM_SELF);
    }
    if (err != MPI_SUCCESS)
        return err;
    {
        std::optional<WanShare> share_of_wan;
        if (h.nclusters > 1 && flow.is_wan_sender(h.rank))
            share_of_wan.emplace(h, flow.wan_senders());
        err = run_flow(image, n, seg, flow, h);
    }
    if (err == MPI_SUCCESS && !direct && h.rank != root) {
        MPI_Count pos = 0;
        err = PMPI_Unpack_c(image, n, &pos, buf, count, type, MPI_COMM_SELF);
    }
    return err;
}

} // namespace hashi::coll::algo
