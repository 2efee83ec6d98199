// SPDX-License-Identifier: BSD-3-Clause
// Single-leader broadcast for short messages, where the WAN latency is the
// whole cost: the root sends the message straight to one leader in every
// other cluster (one WAN crossing, all clusters at once), and every
// cluster then broadcasts it locally with MPICH's own (node-aware)
// broadcast. The root's cluster starts its local broadcast while the WAN
// messages are still on their way.
#include "../algorithms.hpp"
#include "../pacing.hpp"

#include <mpi.h>

#include <optional>
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

    int err = MPI_SUCCESS;
    if (h.rank == root && h.nclusters > 1) {
        const WanShare share(h, 1);
        std::vector<MPI_Request> reqs;
        reqs.reserve(h.nclusters - 1);
        for (int c = 0; c < h.nclusters && err == MPI_SUCCESS; ++c) {
            if (c == root_cluster)
                continue;
            reqs.push_back(MPI_REQUEST_NULL);
            err = PMPI_Isend(buf, count, type, leader(c), tag_leader, h.comm, &reqs.back());
        }
        if (err == MPI_SUCCESS && h.my_cluster_size() > 1)
            err = PMPI_Bcast(buf, count, type, h.index_in_cluster[root], h.cluster_comm);
        const int werr = PMPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
        return err != MPI_SUCCESS ? err : werr;
    }

    int local_root = h.index_in_cluster[root];
    if (h.my_cluster != root_cluster) {
        const int l = leader(h.my_cluster);
        if (h.rank == l)
            err = PMPI_Recv(buf, count, type, root, tag_leader, h.comm, MPI_STATUS_IGNORE);
        local_root = h.index_in_cluster[l];
    }
    if (err == MPI_SUCCESS && h.my_cluster_size() > 1)
        err = PMPI_Bcast(buf, count, type, local_root, h.cluster_comm);
    return err;
}

} // namespace hashi::coll::algo
