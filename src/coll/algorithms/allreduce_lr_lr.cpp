// SPDX-License-Identifier: BSD-3-Clause
// Nguyen et al. multi-leader allreduce (lr_lr) with clusters as groups:
// ring reduce-scatter in the cluster, then L concurrent rings across the
// clusters (one per lane) doing a ring reduce-scatter and a ring allgather
// of the lane's piece, then ring allgather in the cluster. No pipelining.
#include "../algorithms.hpp"
#include "ring_blocks.hpp"

namespace hashi::coll::algo {

int allreduce_lr_lr(
    const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, const Hierarchy& h, const Tuning& t)
{
    return hier_allreduce(sendbuf, recvbuf, count, type, op, h, t, {0, 1}, ring_allreduce);
}

} // namespace hashi::coll::algo
