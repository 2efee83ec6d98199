// SPDX-License-Identifier: BSD-3-Clause
// Hierarchical reduce: the vector crosses the WAN once, from each remote
// cluster to the root's, in pieces sent by at most L = min(t.wan_senders,
// cluster size) lanes per cluster.
//
// 1. Every cluster reduce-scatters the vector onto its L "holders": lanes
//    0..L-1 in a remote cluster; in the root's cluster the L lanes starting
//    at the root's own lane position, so the root is a holder and keeps
//    its piece instead of receiving it.
// 2. Holder j of a remote cluster sends its piece to the holders of the
//    root's cluster whose pieces overlap it (clusters of different sizes
//    cut the vector into different numbers of pieces), which add it in.
// 3. The root's holders send their finished pieces to the root.
//
// With t.segment_bytes set, the vector is cut into segments that flow
// through these steps one after another: a cluster reduce-scatters segment
// s while segment s-1 is on the WAN and its sums travel to the root.
#include "../algorithms.hpp"
#include "../datatype.hpp"
#include "../pacing.hpp"
#include "ring_blocks.hpp" // WireType

#include <mpi.h>

#include <algorithm>
#include <memory>
#include <vector>

namespace hashi::coll::algo {

namespace {

constexpr int tag_wan = 1; // a remote cluster's partial sum of a piece
constexpr int tag_root = 2; // a finished piece, to the root

// A set of requests completed together, cancelled when given up on.
struct Requests {
    std::vector<MPI_Request> list;
    int add(int rc, const MPI_Request& r) // by reference: read after the call that fills it
    {
        if (rc == MPI_SUCCESS)
            list.push_back(r);
        return rc;
    }
    int wait()
    {
        const int rc = PMPI_Waitall(static_cast<int>(list.size()), list.data(), MPI_STATUSES_IGNORE);
        list.clear();
        return rc;
    }
    void cancel()
    {
        for (MPI_Request& r : list)
            PMPI_Cancel(&r);
        wait();
    }
};

} // namespace

int reduce_hier(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
    const Hierarchy& h, const Tuning& t)
{
    if (count < 0)
        return MPI_ERR_COUNT;
    if (root < 0 || root >= h.size)
        return MPI_ERR_ROOT;
    if (count == 0)
        return MPI_SUCCESS;

    const int R = h.cluster_of[root], A = h.my_cluster, S = h.nclusters;
    const bool is_root = h.rank == root;
    const void* in = is_root && sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    const TypeInfo ti = type_info(type);
    const WireType wire(type); // for point-to-point transfers; reductions use `type`

    auto lanes_in = [&](int c) { return std::max(1, std::min(t.wan_senders, h.cluster_size(c))); };
    // The holders of each cluster in cluster-rank order: the reduce-scatter
    // hands out consecutive pieces in that order, so holders[c][k] holds
    // piece k (of lanes_in(c)).
    std::vector<std::vector<int>> holders(S);
    for (int c = 0; c < S; ++c) {
        const int first = c == R ? h.lane_of[root] : 0;
        for (int j = 0; j < lanes_in(c); ++j)
            holders[c].push_back(h.lanes[c][(first + j) % h.cluster_size(c)]);
        std::sort(holders[c].begin(), holders[c].end(),
            [&](int a, int b) { return h.index_in_cluster[a] < h.index_in_cluster[b]; });
    }
    auto holder = [&](int c, int k) { return holders[c][k]; };
    const int my_lanes = lanes_in(A), root_lanes = lanes_in(R);
    int me_holder = -1; // which piece I hold, if any
    for (int k = 0; k < my_lanes; ++k)
        if (holder(A, k) == h.rank)
            me_holder = k;
    const bool receiver = A == R && me_holder >= 0;

    int nseg = 1;
    if (t.segment_bytes > 0 && ti.size > 0) {
        const auto bytes = static_cast<std::size_t>(count) * static_cast<std::size_t>(ti.size);
        nseg = static_cast<int>(std::min<std::size_t>(count, (bytes + t.segment_bytes - 1) / t.segment_bytes));
        nseg = std::max(nseg, 1);
    }
    auto segment = [&](int s) { return piece(count, nseg, s); };
    const int seg_max = segment(0).second; // the first segment is the largest
    const int piece_max = (seg_max + my_lanes - 1) / my_lanes;

    // Two of everything, so segment s fills one set while s-1 drains the other.
    Scratch mine[2], remote[2];
    for (int p = 0; p < 2 && p < nseg; ++p) {
        if (me_holder >= 0)
            mine[p] = Scratch(type, piece_max);
        if (receiver)
            remote[p] = Scratch(type, static_cast<MPI_Aint>(S - 1) * piece_max);
    }
    Requests sends[2], wan_in[2], at_root;
    auto give_up = [&](int rc) {
        for (Requests* r : {&sends[0], &sends[1], &wan_in[0], &wan_in[1], &at_root})
            r->cancel();
        return rc;
    };

    // A receiver's share of segment s arrives from every remote holder
    // whose piece overlaps it, into one slot per remote cluster.
    auto post_wan_receives = [&](int s) {
        const int n = segment(s).second - segment(s).first;
        const auto [rb, re] = piece(n, my_lanes, me_holder);
        Requests& reqs = wan_in[s % 2];
        for (int B = 0, slot = 0; B < S; ++B) {
            if (B == R)
                continue;
            void* into = element(remote[s % 2].data(), ti, static_cast<MPI_Aint>(slot++) * piece_max);
            for (int j = 0; j < lanes_in(B); ++j) {
                const auto [pb, pe] = piece(n, lanes_in(B), j);
                const int lo = std::max(rb, pb), hi = std::min(re, pe);
                if (lo >= hi)
                    continue;
                MPI_Request r;
                const int rc =
                    PMPI_Irecv(element(into, ti, lo - rb), hi - lo, wire.get(), holder(B, j), tag_wan, h.comm, &r);
                if (reqs.add(rc, r) != MPI_SUCCESS)
                    return rc;
            }
        }
        return MPI_SUCCESS;
    };
    // A receiver adds the remote sums of segment s and passes it on.
    auto finish_segment = [&](int s) {
        const int sb = segment(s).first, n = segment(s).second - sb;
        const auto [rb, re] = piece(n, my_lanes, me_holder);
        if (int rc = wan_in[s % 2].wait(); rc != MPI_SUCCESS)
            return rc;
        void* sum = mine[s % 2].data();
        for (int slot = 0; slot < S - 1; ++slot) {
            const void* part = element(remote[s % 2].data(), ti, static_cast<MPI_Aint>(slot) * piece_max);
            if (int rc = PMPI_Reduce_local(part, sum, re - rb, type, op); rc != MPI_SUCCESS)
                return rc;
        }
        if (is_root)
            return copy_elements(sum, element(recvbuf, ti, sb + rb), re - rb, type);
        if (re == rb)
            return MPI_SUCCESS; // the root posts no receive for an empty piece
        MPI_Request r;
        return sends[s % 2].add(PMPI_Isend(sum, re - rb, wire.get(), root, tag_root, h.comm, &r), r);
    };

    std::unique_ptr<WanShare> share;
    if (me_holder >= 0 && A != R)
        share = std::make_unique<WanShare>(h, my_lanes);
    std::vector<int> counts(h.my_cluster_size());
    char nothing = 0;
    int rc = MPI_SUCCESS;
    if (receiver && (rc = post_wan_receives(0)) != MPI_SUCCESS)
        return give_up(rc);
    for (int s = 0; s < nseg; ++s) {
        const int p = s % 2, sb = segment(s).first, n = segment(s).second - sb;
        // The buffers of segment s-2 are free once its sends are done.
        if ((rc = sends[p].wait()) != MPI_SUCCESS)
            return give_up(rc);
        std::fill(counts.begin(), counts.end(), 0);
        for (int j = 0; j < my_lanes; ++j) {
            const auto [b, e] = piece(n, my_lanes, j);
            counts[h.index_in_cluster[holder(A, j)]] = e - b;
        }
        void* out = me_holder >= 0 ? mine[p].data() : &nothing; // non-holders receive nothing
        rc = PMPI_Reduce_scatter(element(in, ti, sb), out, counts.data(), type, op, h.cluster_comm);
        if (rc != MPI_SUCCESS)
            return give_up(rc);

        if (me_holder >= 0 && A != R) {
            const auto [mb, me] = piece(n, my_lanes, me_holder);
            for (int i = 0; i < root_lanes; ++i) {
                const auto [rb, re] = piece(n, root_lanes, i);
                const int lo = std::max(mb, rb), hi = std::min(me, re);
                if (lo >= hi)
                    continue;
                MPI_Request r;
                rc = PMPI_Isend(
                    element(mine[p].data(), ti, lo - mb), hi - lo, wire.get(), holder(R, i), tag_wan, h.comm, &r);
                if (sends[p].add(rc, r) != MPI_SUCCESS)
                    return give_up(rc);
            }
        }
        if (is_root) {
            // Segment s of recvbuf is no longer read as input: the other
            // holders' sums of it may land there.
            for (int i = 0; i < root_lanes; ++i) {
                const auto [b, e] = piece(n, root_lanes, i);
                if (b == e || i == me_holder)
                    continue;
                MPI_Request r;
                rc = PMPI_Irecv(element(recvbuf, ti, sb + b), e - b, wire.get(), holder(R, i), tag_root, h.comm, &r);
                if (at_root.add(rc, r) != MPI_SUCCESS)
                    return give_up(rc);
            }
        }
        if (receiver) {
            // Segment s-1 frees the slots that segment s+1 arrives in.
            if (s > 0 && (rc = finish_segment(s - 1)) != MPI_SUCCESS)
                return give_up(rc);
            if (s + 1 < nseg && (rc = post_wan_receives(s + 1)) != MPI_SUCCESS)
                return give_up(rc);
        }
    }
    if (receiver && (rc = finish_segment(nseg - 1)) != MPI_SUCCESS)
        return give_up(rc);
    for (Requests* r : {&sends[0], &sends[1], &at_root})
        if ((rc = r->wait()) != MPI_SUCCESS)
            return give_up(rc);
    return MPI_SUCCESS;
}

} // namespace hashi::coll::algo
