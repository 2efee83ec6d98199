// SPDX-License-Identifier: BSD-3-Clause
// Hierarchical allgatherv: allgather inside every cluster (MPICH's own
// algorithm on the cluster communicator), then each cluster's blocks cross
// to every other cluster exactly once, on lanes 0..L-1 in parallel and cut
// so that every rank of the receiving cluster gets an equal part, then the
// ranks of each cluster exchange the parts they received.
//
// The work is done on a byte image of the result: the blocks of all ranks
// back to back in rank order, as MPI packs them. Working in bytes of the
// type signature (not in elements of the local datatype) keeps the pieces
// identical on all ranks even when ranks describe their buffers with
// different datatypes, which MPI allows. The image is the user's buffer
// itself when its layout already is that (the usual case: a contiguous
// type and displacements that follow each other); otherwise a scratch
// buffer, unpacked into the user's layout at the end.
#include "../algorithms.hpp"
#include "../datatype.hpp"
#include "../pacing.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <vector>

namespace hashi::coll::algo {

namespace detail {
// Shared with allgather_hier.cpp, which declares it.
int gather_bytes(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
    const std::vector<MPI_Count>& counts, const std::vector<MPI_Aint>& displs, MPI_Datatype recvtype,
    const Hierarchy& h, const Tuning& t);
} // namespace detail

namespace {

// Tags on h.comm. Lane forwards carry the source cluster in the tag, since
// a lane forwards the pieces of several clusters in the order they arrive.
constexpr int tag_wan = 0x4a10;
constexpr int tag_local = 0x4a20; // + source cluster

// A set of byte runs of the image, as one message.
struct Message {
    void* buf = nullptr;
    int count = 0;
    MPI_Datatype type = MPI_BYTE;
    bool derived = false;
};

class Image {
public:
    Image(char* base, const std::vector<MPI_Count>& bytes, const Hierarchy& h) : base_(base), bytes_(bytes), h_(h)
    {
        offset_.resize(bytes.size());
        MPI_Count at = 0;
        for (std::size_t r = 0; r < bytes.size(); ++r) {
            offset_[r] = at;
            at += bytes[r];
        }
        cluster_bytes_.assign(h.nclusters, 0);
        for (int c = 0; c < h.nclusters; ++c)
            for (int r : h.members[c])
                cluster_bytes_[c] += bytes[r];
    }
    char* base() const { return base_; }
    MPI_Count offset(int r) const { return offset_[r]; }
    MPI_Count bytes(int r) const { return bytes_[r]; }

    // Part k of cluster c's blocks (taken in member order) for a cluster of
    // q ranks, whose lanes 0..L-1 also send over the WAN. Every rank passes
    // its part on to the q - 1 others, and a sending lane also sends about
    // 1 / L of its own cluster's blocks across, so with clusters of similar
    // size the sending lanes' parts are smaller, (L - 1) : L, which makes
    // every rank send about as much.
    std::pair<MPI_Count, MPI_Count> part_of(int c, int k, int q, int L) const
    {
        const MPI_Count n = cluster_bytes_[c];
        if (q <= L)
            return {n * k / q, n * (k + 1) / q};
        // Weight of parts 0..j-1.
        auto before = [&](MPI_Count j) {
            return j <= L ? j * (L - 1) : static_cast<MPI_Count>(L) * (L - 1) + (j - L) * L;
        };
        const MPI_Count total = before(q);
        return {n * before(k) / total, n * before(k + 1) / total};
    }

    // The message that carries bytes [a, b) of cluster c's blocks; empty
    // (count 0) when the range is. Any derived type it builds is committed
    // and must be released with release().
    int message(int c, MPI_Count a, MPI_Count b, Message& m) const
    {
        std::vector<MPI_Count> lens, displs;
        MPI_Count at = 0; // start of the current member's block in cluster order
        for (int r : h_.members[c]) {
            const MPI_Count lo = std::max(a, at), hi = std::min(b, at + bytes_[r]);
            if (lo < hi) {
                lens.push_back(hi - lo);
                displs.push_back(offset_[r] + (lo - at));
            }
            at += bytes_[r];
        }
        m = Message {};
        if (lens.empty())
            return MPI_SUCCESS;
        if (lens.size() == 1 && lens[0] <= max_int_bytes) {
            m.buf = base_ + displs[0];
            m.count = static_cast<int>(lens[0]);
            return MPI_SUCCESS;
        }
        int err = PMPI_Type_create_hindexed_c(
            static_cast<MPI_Count>(lens.size()), lens.data(), displs.data(), MPI_BYTE, &m.type);
        if (err == MPI_SUCCESS)
            err = PMPI_Type_commit(&m.type);
        m.buf = base_;
        m.count = 1;
        m.derived = true;
        return err;
    }

private:
    static constexpr MPI_Count max_int_bytes = 0x7fffffff;
    char* base_;
    const std::vector<MPI_Count>& bytes_;
    const Hierarchy& h_;
    std::vector<MPI_Count> offset_;
    std::vector<MPI_Count> cluster_bytes_;
};

// Posts one send or receive of `m` and drops its derived type, which MPI
// keeps alive until the operation completes.
int post(Message& m, bool send, int peer, int tag, MPI_Comm comm, MPI_Request* req)
{
    *req = MPI_REQUEST_NULL;
    if (m.count == 0)
        return MPI_SUCCESS;
    int err = send ? PMPI_Isend(m.buf, m.count, m.type, peer, tag, comm, req)
                   : PMPI_Irecv(m.buf, m.count, m.type, peer, tag, comm, req);
    if (m.derived)
        PMPI_Type_free(&m.type);
    return err;
}

// Phases 2 and 3: the WAN exchange and the local hand-out, as one data
// flow. Cluster c's blocks are cut into one part per rank of a destination
// cluster d (see Image::part_of); part k goes over the WAN to d's lane k,
// sent by c's lane k % L, so at most L ranks of c send across while every
// rank of d receives a part, and each rank passes the parts it got to the
// rest of its cluster as soon as each has arrived. (Sending everything to
// L receivers instead would leave them to forward (q - 1) / L of the
// remote data each.)
int exchange_between_clusters(const Image& img, const Hierarchy& h, const Tuning& t)
{
    const int L = std::max(1, std::min(t.wan_senders, h.min_cluster_size));
    const int me = h.rank, mine = h.my_cluster, lane = h.my_lane;
    const auto& my_lanes = h.lanes[mine];
    const int q = h.my_cluster_size();

    std::vector<MPI_Request> reqs;
    std::vector<int> wan_recv_cluster; // reqs index -> source cluster of a WAN receive, else -1
    reqs.reserve(static_cast<std::size_t>(h.nclusters) * 2 * q + h.size / L + 1);
    auto add = [&](int c, int part, int parts, bool send, int peer, int tag) {
        Message m;
        auto [a, b] = img.part_of(c, part, parts, L);
        int err = img.message(c, a, b, m);
        reqs.push_back(MPI_REQUEST_NULL);
        return err == MPI_SUCCESS ? post(m, send, peer, tag, h.comm, &reqs.back()) : err;
    };
    int err = MPI_SUCCESS;
    std::optional<WanShare> share;
    for (int c = 0; c < h.nclusters && err == MPI_SUCCESS; ++c) {
        if (c == mine)
            continue;
        // My part of cluster c's blocks, over the WAN.
        if ((err = add(c, lane, q, false, h.lanes[c][lane % L], tag_wan)) != MPI_SUCCESS)
            break;
        wan_recv_cluster.resize(reqs.size(), -1);
        wan_recv_cluster.back() = c;
        // The parts of cluster c the other ranks of my cluster will pass me.
        for (int k = 0; k < q && err == MPI_SUCCESS; ++k)
            if (my_lanes[k] != me)
                err = add(c, k, q, false, my_lanes[k], tag_local + c);
    }
    if (lane < L) {
        share.emplace(h, L);
        for (int d = 0; d < h.nclusters && err == MPI_SUCCESS; ++d)
            for (int k = lane; d != mine && k < h.cluster_size(d) && err == MPI_SUCCESS; k += L)
                err = add(mine, k, h.cluster_size(d), true, h.lanes[d][k], tag_wan);
    }

    std::vector<int> done(reqs.size());
    while (err == MPI_SUCCESS) {
        int n = 0;
        err = PMPI_Waitsome(static_cast<int>(reqs.size()), reqs.data(), &n, done.data(), MPI_STATUSES_IGNORE);
        if (err != MPI_SUCCESS || n == MPI_UNDEFINED)
            break;
        for (int i = 0; i < n && err == MPI_SUCCESS; ++i) {
            if (static_cast<std::size_t>(done[i]) >= wan_recv_cluster.size() || wan_recv_cluster[done[i]] < 0)
                continue;
            // My part of cluster c arrived: hand it to the rest of my cluster.
            const int c = wan_recv_cluster[done[i]];
            for (int k = 0; k < q && err == MPI_SUCCESS; ++k)
                if (my_lanes[k] != me)
                    err = add(c, lane, q, true, my_lanes[k], tag_local + c);
        }
        done.resize(reqs.size());
    }
    return err;
}

} // namespace

namespace detail {

// The allgatherv of both entry points: counts[r] elements of recvtype from
// rank r land at element displs[r] of recvbuf.
int gather_bytes(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
    const std::vector<MPI_Count>& counts, const std::vector<MPI_Aint>& displs, MPI_Datatype recvtype,
    const Hierarchy& h, const Tuning& t)
{
    const TypeInfo ti = type_info(recvtype);
    std::vector<MPI_Count> bytes(h.size);
    MPI_Count total = 0;
    for (int r = 0; r < h.size; ++r) {
        bytes[r] = counts[r] * ti.size;
        total += bytes[r];
    }
    if (total == 0)
        return MPI_SUCCESS;
    const int me = h.rank;
    if (sendbuf != MPI_IN_PLACE) {
        int ssize = 0;
        PMPI_Type_size(sendtype, &ssize);
        if (static_cast<MPI_Count>(sendcount) * ssize != bytes[me]) {
            std::fprintf(stderr,
                "hashi-coll: allgather(v): rank %d sends %lld bytes but the receive count for it "
                "says %lld bytes\n",
                me, static_cast<long long>(sendcount) * ssize, static_cast<long long>(bytes[me]));
            return MPI_ERR_TRUNCATE;
        }
    }

    // Use the user's buffer as the image when the blocks already lie there
    // back to back in rank order.
    bool in_user_buffer = bytes_are_memory(recvtype);
    {
        MPI_Count at = 0;
        for (int r = 0; r < h.size && in_user_buffer; ++r) {
            in_user_buffer = bytes[r] == 0 || displs[r] * ti.extent == at;
            at += bytes[r];
        }
    }
    char* const user = static_cast<char*>(recvbuf);
    std::unique_ptr<char[]> scratch;
    char* base = user + ti.true_lb;
    if (!in_user_buffer) {
        scratch.reset(new char[total]);
        base = scratch.get();
    }
    const Image img(base, bytes, h);

    // My own block into the image.
    int err = MPI_SUCCESS;
    MPI_Count pos = 0;
    if (sendbuf != MPI_IN_PLACE)
        err = PMPI_Pack_c(sendbuf, sendcount, sendtype, base + img.offset(me), bytes[me], &pos, MPI_COMM_SELF);
    else if (!in_user_buffer)
        err = PMPI_Pack_c(
            user + displs[me] * ti.extent, counts[me], recvtype, base + img.offset(me), bytes[me], &pos, MPI_COMM_SELF);

    // Phase 1: every rank gets the blocks of its own cluster.
    if (err == MPI_SUCCESS && h.my_cluster_size() > 1) {
        const auto& mem = h.members[h.my_cluster];
        std::vector<MPI_Count> ccounts(mem.size());
        std::vector<MPI_Aint> cdispls(mem.size());
        for (std::size_t i = 0; i < mem.size(); ++i) {
            ccounts[i] = bytes[mem[i]];
            cdispls[i] = img.offset(mem[i]);
        }
        err = PMPI_Allgatherv_c(
            MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, base, ccounts.data(), cdispls.data(), MPI_BYTE, h.cluster_comm);
    }
    if (err == MPI_SUCCESS && h.nclusters > 1)
        err = exchange_between_clusters(img, h, t);

    if (err == MPI_SUCCESS && !in_user_buffer) {
        for (int r = 0; r < h.size && err == MPI_SUCCESS; ++r) {
            if (r == me && sendbuf == MPI_IN_PLACE)
                continue;
            MPI_Count at = img.offset(r);
            err = PMPI_Unpack_c(base, total, &at, user + displs[r] * ti.extent, counts[r], recvtype, MPI_COMM_SELF);
        }
    }
    return err;
}

} // namespace detail

int allgatherv_hier(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
    const int* displs, MPI_Datatype recvtype, const Hierarchy& h, const Tuning& t)
{
    std::vector<MPI_Count> counts(h.size);
    std::vector<MPI_Aint> at(h.size);
    for (int r = 0; r < h.size; ++r) {
        if (recvcounts[r] < 0) {
            std::fprintf(stderr, "hashi-coll: allgatherv: recvcounts[%d] = %d is negative\n", r, recvcounts[r]);
            return MPI_ERR_COUNT;
        }
        counts[r] = recvcounts[r];
        at[r] = displs[r];
    }
    return detail::gather_bytes(sendbuf, sendcount, sendtype, recvbuf, counts, at, recvtype, h, t);
}

} // namespace hashi::coll::algo
