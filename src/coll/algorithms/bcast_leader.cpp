// SPDX-License-Identifier: BSD-3-Clause
// Single-leader broadcast for short messages, where the WAN latency is the
// whole cost: the root sends the message straight to one leader in every
// other cluster (one WAN crossing, all clusters at once), and every
// cluster then broadcasts it locally with MPICH's own (node-aware)
// broadcast. The root's cluster starts its local broadcast while the WAN
// messages are still on their way.
//
// A datatype whose bytes are not simply its memory (holes, padding) crosses
// packed, as MPICH's own broadcast sends it: leaders receive bytes of the
// type signature whatever datatype the root used, and MPICH 4.0.2 crashes
// on point-to-point sends of pair types with padding (MPI_DOUBLE_INT,
// MPI_LONG_INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT) between ranks of one
// node, which a root and a leader of another cluster can be in a test.
#include "../algorithms.hpp"
#include "../datatype.hpp"
#include "../pacing.hpp"

#include <mpi.h>

#include <climits>
#include <memory>
#include <vector>

namespace hashi::coll::algo {

namespace {
constexpr int tag_leader = 0x4c00;
} // namespace

int bcast_leader(void* buf, int count, MPI_Datatype type, int root, const Hierarchy& h, const Tuning&)
{
    if (root < 0 || root >= h.size)
        return MPI_ERR_ROOT;
    int size = 0;
    PMPI_Type_size(type, &size);
    if (count == 0 || size == 0 || h.size == 1)
        return MPI_SUCCESS;

    const int root_cluster = h.cluster_of[root];
    // The leader of a cluster that is not the root's: its lane 0.
    auto leader = [&](int c) { return h.lanes[c][0]; };
    const bool is_leader = h.my_cluster != root_cluster && h.rank == leader(h.my_cluster);

    // The message as it crosses the WAN, in bytes of the type signature on
    // both sides: the user's buffer when its bytes are its memory, else a
    // packed copy. (Past INT_MAX bytes, the user's datatype on both sides.)
    const MPI_Count n = static_cast<MPI_Count>(count) * size;
    std::unique_ptr<char[]> packed;
    void* wire = buf;
    int wire_count = count;
    MPI_Datatype wire_type = type;
    int err = MPI_SUCCESS;
    if (h.nclusters > 1 && (h.rank == root || is_leader) && n <= INT_MAX) {
        wire_count = static_cast<int>(n);
        wire_type = MPI_BYTE;
        if (bytes_are_memory(type)) {
            MPI_Aint true_lb = 0, true_extent = 0;
            PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
            wire = static_cast<char*>(buf) + true_lb;
        } else {
            packed.reset(new char[n]);
            wire = packed.get();
            MPI_Count pos = 0;
            if (h.rank == root)
                err = PMPI_Pack_c(buf, count, type, wire, n, &pos, MPI_COMM_SELF);
        }
    }

    if (err == MPI_SUCCESS && h.rank == root && h.nclusters > 1) {
        const WanShare share(h, 1);
        std::vector<MPI_Request> reqs;
        reqs.reserve(h.nclusters - 1);
        for (int c = 0; c < h.nclusters && err == MPI_SUCCESS; ++c) {
            if (c == root_cluster)
                continue;
            reqs.push_back(MPI_REQUEST_NULL);
            err = PMPI_Isend(wire, wire_count, wire_type, leader(c), tag_leader, h.comm, &reqs.back());
        }
        if (err == MPI_SUCCESS && h.my_cluster_size() > 1)
            err = PMPI_Bcast(buf, count, type, h.index_in_cluster[root], h.cluster_comm);
        const int werr = PMPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
        return err != MPI_SUCCESS ? err : werr;
    }

    int local_root = h.index_in_cluster[root];
    if (h.my_cluster != root_cluster)
        local_root = h.index_in_cluster[leader(h.my_cluster)];
    if (err == MPI_SUCCESS && is_leader) {
        err = PMPI_Recv(wire, wire_count, wire_type, root, tag_leader, h.comm, MPI_STATUS_IGNORE);
        MPI_Count pos = 0;
        if (err == MPI_SUCCESS && packed)
            err = PMPI_Unpack_c(wire, n, &pos, buf, count, type, MPI_COMM_SELF);
    }
    if (err == MPI_SUCCESS && h.my_cluster_size() > 1)
        err = PMPI_Bcast(buf, count, type, local_root, h.cluster_comm);
    return err;
}

} // namespace hashi::coll::algo
