// SPDX-License-Identifier: BSD-3-Clause
// The flat ring: reduce-scatter and allgather over all ranks in comm
// order, blind to nodes and clusters. Bandwidth-optimal on a uniform
// network; across a WAN every one of its 2(P-1) steps waits for the ring
// edges that cross it. The baseline the multi-leader algorithms beat.
#include "../algorithms.hpp"
#include "../pacing.hpp"
#include "ring_blocks.hpp"

#include <optional>

namespace hashi::coll::algo {

int allreduce_ring(
    const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, const Hierarchy& h, const Tuning& t)
{
    (void)t; // topology-blind: no lanes, no segments
    bool work;
    if (const int rc = start_in_recvbuf(sendbuf, recvbuf, count, type, h, work); rc != MPI_SUCCESS || !work)
        return rc;
    const TypeInfo ti = type_info(type);

    std::vector<int> ranks(static_cast<std::size_t>(h.size));
    for (int r = 0; r < h.size; ++r)
        ranks[static_cast<std::size_t>(r)] = r;
    const Block all {0, count};

    // The ring edges that leave my cluster for my successor's all carry
    // data at once: tell the transport how many share that WAN path.
    std::optional<WanShare> share;
    const int next_cluster = h.cluster_of[(h.rank + 1) % h.size];
    if (next_cluster != h.my_cluster) {
        int senders = 0;
        for (int r : h.members[h.my_cluster])
            senders += h.cluster_of[(r + 1) % h.size] == next_cluster;
        share.emplace(h, senders);
    }

    const MPI_Aint temp_elems = count / h.size + 1;
    return run_chains(h.comm, type, op, 1, 1, temp_elems,
        [&](int, void* temp, Schedule& s) { ring_allreduce(s, ranks, h.rank, all, recvbuf, temp, ti); });
}

} // namespace hashi::coll::algo
