// SPDX-License-Identifier: BSD-3-Clause
// Hierarchical reduce_scatter_block: every rank's block crosses the WAN
// once per remote cluster, as that cluster's partial sum, sent by one of
// at most L = min(t.wan_senders, cluster size) lanes.
//
// 1. One reduce-scatter inside each cluster A gives every rank of A its own
//    block summed over A, and lane l of A (lane position l < L) also piece
//    l (of L) of every other cluster B's blocks (B's ranks in ascending
//    order), summed over A.
// 2. Lane l of A sends each rank of B the part of its piece that is that
//    rank's block, and every rank adds what the other clusters sent it.
//
// The remote sums go straight to their owners rather than through a lane
// of the owner's cluster: node links, not the WAN, are the bottleneck on
// the target grid, and a detour would cross one of them again.
#include "../algorithms.hpp"
#include "../datatype.hpp"
#include "../pacing.hpp"
#include "ring_blocks.hpp" // WireType

#include <mpi.h>

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

namespace hashi::coll::algo {

namespace {

constexpr int tag_partial = 1; // a cluster's partial sum of part of a block

int lanes_of(const Hierarchy& h, const Tuning& t, int cluster)
{
    return std::max(1, std::min(t.wan_senders, h.cluster_size(cluster)));
}

// Part `i` of `n` elements cut into `parts`, as piece() does, in MPI_Aint
// because a cluster's blocks together may hold more than INT_MAX elements.
std::pair<MPI_Aint, MPI_Aint> part(MPI_Aint n, int parts, int i)
{
    const MPI_Aint base = n / parts, extra = n % parts;
    const MPI_Aint begin = i * base + std::min<MPI_Aint>(i, extra);
    return {begin, begin + base + (i < extra ? 1 : 0)};
}

} // namespace

int reduce_scatter_block_hier(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
    const Hierarchy& h, const Tuning& t)
{
    if (recvcount < 0)
        return MPI_ERR_COUNT;
    if (recvcount == 0)
        return MPI_SUCCESS;

    const MPI_Aint rc = recvcount;
    const int A = h.my_cluster, S = h.nclusters;
    const int my_lanes = lanes_of(h, t, A);
    const TypeInfo ti = type_info(type);
    const WireType wire(type); // for point-to-point transfers; reductions use `type`
    // In place, the input is recvbuf; it is copied below before anything
    // is written to recvbuf.
    const void* in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;

    // Elements [begin, end) of cluster B's blocks, copied to dst.
    auto copy_part = [&](int B, MPI_Aint begin, MPI_Aint end, void* dst) {
        while (begin < end) {
            const MPI_Aint k = begin / rc, off = begin % rc, n = std::min(rc - off, end - begin);
            const int rank = h.members[B][k];
            if (int r = copy_elements(element(in, ti, rank * rc + off), dst, n, type); r != MPI_SUCCESS)
                return r;
            dst = element(dst, ti, n);
            begin += n;
        }
        return MPI_SUCCESS;
    };

    // The reduce-scatter's input, in cluster-rank order: each rank's own
    // block, then for a lane its pieces of the other clusters' blocks.
    std::vector<MPI_Count> counts(h.my_cluster_size());
    Scratch staged(type, h.size * rc);
    void* at = staged.data();
    for (int i = 0; i < h.my_cluster_size(); ++i) {
        const int m = h.members[A][i];
        if (int r = copy_part(A, i * rc, (i + 1) * rc, at); r != MPI_SUCCESS)
            return r;
        at = element(at, ti, rc);
        counts[i] = rc;
        if (h.lane_of[m] >= my_lanes)
            continue;
        for (int B = 0; B < S; ++B) {
            if (B == A)
                continue;
            const auto [b, e] = part(h.cluster_size(B) * rc, my_lanes, h.lane_of[m]);
            if (int r = copy_part(B, b, e, at); r != MPI_SUCCESS)
                return r;
            at = element(at, ti, e - b);
            counts[i] += e - b;
        }
    }

    // What the other clusters' lanes send me, one slot per cluster, posted
    // before the local phase so it can arrive during it.
    Scratch remote(type, (S - 1) * rc);
    std::vector<MPI_Request> reqs;
    int rc_err = MPI_SUCCESS;
    auto post = [&](int r, const MPI_Request& req) { // by reference: read after the call that fills it
        if (r != MPI_SUCCESS)
            rc_err = r;
        else
            reqs.push_back(req);
        return r == MPI_SUCCESS;
    };
    // On an error, receives still pending would write into scratch space
    // that is about to be freed: cancel them before returning.
    auto give_up = [&]() {
        for (MPI_Request& r : reqs)
            PMPI_Cancel(&r);
        PMPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
        return rc_err;
    };
    const MPI_Aint mine = h.cluster_rank * rc; // my block among my cluster's
    for (int B = 0, slot = 0; B < S; ++B) {
        if (B == A)
            continue;
        void* into = element(remote.data(), ti, slot++ * rc);
        const int lanes_b = lanes_of(h, t, B);
        for (int j = 0; j < lanes_b; ++j) {
            const auto [b, e] = part(h.my_cluster_size() * rc, lanes_b, j);
            const MPI_Aint lo = std::max(b, mine), hi = std::min(e, mine + rc);
            if (lo >= hi)
                continue;
            MPI_Request req;
            if (!post(PMPI_Irecv(element(into, ti, lo - mine), static_cast<int>(hi - lo), wire.get(), h.lanes[B][j],
                          tag_partial, h.comm, &req),
                    req))
                return give_up();
        }
    }

    Scratch result(type, counts[h.cluster_rank]);
    rc_err = PMPI_Reduce_scatter_c(staged.data(), result.data(), counts.data(), type, op, h.cluster_comm);
    if (rc_err != MPI_SUCCESS)
        return give_up();

    std::unique_ptr<WanShare> share;
    if (h.my_lane < my_lanes) {
        share = std::make_unique<WanShare>(h, my_lanes);
        MPI_Aint from = rc; // my pieces follow my own block
        for (int B = 0; B < S; ++B) {
            if (B == A)
                continue;
            const auto [b, e] = part(h.cluster_size(B) * rc, my_lanes, h.my_lane);
            for (int k = static_cast<int>(b / rc); k < h.cluster_size(B) && k * rc < e; ++k) {
                const MPI_Aint lo = std::max(b, k * rc), hi = std::min(e, (k + 1) * rc);
                MPI_Request req;
                if (!post(PMPI_Isend(element(result.data(), ti, from + lo - b), static_cast<int>(hi - lo), wire.get(),
                              h.members[B][k], tag_partial, h.comm, &req),
                        req))
                    return give_up();
            }
            from += e - b;
        }
    }
    if (int r = PMPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE); r != MPI_SUCCESS)
        return r;

    for (int slot = 0; slot < S - 1; ++slot)
        if (int r = PMPI_Reduce_local(element(remote.data(), ti, slot * rc), result.data(), recvcount, type, op);
            r != MPI_SUCCESS)
            return r;
    return copy_elements(result.data(), recvbuf, rc, type);
}

} // namespace hashi::coll::algo
