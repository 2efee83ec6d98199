// SPDX-License-Identifier: BSD-3-Clause
// Single leader per cluster, for short vectors where latency dominates:
// reduce onto the cluster's first rank, the leaders exchange their
// cluster's vectors in one WAN round (each sends to all others at once)
// and each reduces all of them in the same order, then every cluster
// broadcasts its leader's result.
#include "../algorithms.hpp"
#include "../pacing.hpp"
#include "ring_blocks.hpp"

namespace hashi::coll::algo {

int allreduce_leader(
    const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, const Hierarchy& h, const Tuning& t)
{
    (void)t; // one WAN sender per cluster, no segments
    if (count <= 0)
        return MPI_SUCCESS;
    const bool leader = h.cluster_rank == 0;
    const bool in_place = sendbuf == MPI_IN_PLACE;
    int rc = MPI_SUCCESS;
    if (h.my_cluster_size() > 1) {
        // At the root in place stays in place; elsewhere the data is sendbuf,
        // or recvbuf for an in-place call (MPI_Reduce's recvbuf is unused).
        const void* in = in_place && !leader ? recvbuf : sendbuf;
        rc = PMPI_Reduce(in, leader ? recvbuf : nullptr, count, type, op, 0, h.cluster_comm);
    } else {
        bool work;
        rc = start_in_recvbuf(sendbuf, recvbuf, count, type, h, work);
        if (!work)
            return rc;
    }
    if (rc != MPI_SUCCESS)
        return rc;

    if (leader && h.nclusters > 1) {
        std::vector<int> leaders;
        for (int c = 0; c < h.nclusters; ++c)
            leaders.push_back(h.members[c][0]);
        const TypeInfo ti = type_info(type);
        const MPI_Aint temp_elems = static_cast<MPI_Aint>(count) * (h.nclusters - 1);
        WanShare share(h, 1);
        rc = run_chains(h.comm, type, op, 1, 1, temp_elems, [&](int, void* temp, Schedule& s) {
            exchange_reduce(s, leaders, h.my_cluster, {0, count}, recvbuf, temp, ti);
        });
        if (rc != MPI_SUCCESS)
            return rc;
    }
    if (h.my_cluster_size() > 1) {
        const WireType wire(type);
        rc = PMPI_Bcast(recvbuf, count, wire.get(), 0, h.cluster_comm);
    }
    return rc;
}

} // namespace hashi::coll::algo
