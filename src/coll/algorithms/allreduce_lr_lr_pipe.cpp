// SPDX-License-Identifier: BSD-3-Clause
// lr_lr cut into segments, as Nguyen's lr_lr_pipeline: while one segment
// is in its WAN phases (the ring reduce-scatter and allgather across the
// clusters), the next is in its intra-cluster reduce-scatter and the
// previous in its intra-cluster allgather. Unlike Nguyen's blocking
// version, which keeps two segments in lockstep, each segment moves to its
// next step as soon as its current one is done and more than two may be
// in flight (see pipeline()), so the WAN round trips of one segment are
// covered by the local work of the others.
#include "../algorithms.hpp"
#include "ring_blocks.hpp"

namespace hashi::coll::algo {

int allreduce_lr_lr_pipe(
    const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, const Hierarchy& h, const Tuning& t)
{
    return hier_allreduce(sendbuf, recvbuf, count, type, op, h, t, pipeline(t), ring_allreduce);
}

} // namespace hashi::coll::algo
