// SPDX-License-Identifier: BSD-3-Clause
// Matsuda et al. 2006: Rabenseifner's allreduce modified for the WAN.
// Reduce-scatter in every cluster onto L lanes, lane j of every cluster
// exchanges piece j with lane j of the others and reduces the copies (one
// WAN crossing, one WAN latency), allgather in every cluster. Pipelined:
// the data goes in segments, several in flight, so one segment's WAN
// exchange overlaps other segments' reduce-scatter and allgather, and the
// node NICs do not wait for the WAN latency.
#include "../algorithms.hpp"
#include "ring_blocks.hpp"

namespace hashi::coll::algo {

int allreduce_matsuda(
    const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, const Hierarchy& h, const Tuning& t)
{
    return hier_allreduce(sendbuf, recvbuf, count, type, op, h, t, pipeline(t), exchange_reduce);
}

} // namespace hashi::coll::algo
