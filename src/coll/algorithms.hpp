// SPDX-License-Identifier: BSD-3-Clause
// Every collective algorithm of libhashi-coll, one per file under
// src/coll/algorithms/. The selector (selector.cpp) chooses among them;
// the entry points (pmpi_entry.cpp) call the chosen one.
//
// Rules every algorithm follows:
// - It is called by every rank of the communicator with the arguments the
//   user passed to the MPI call (after the entry point replaced
//   MPI_IN_PLACE where noted) and returns an MPI error code.
// - It calls only PMPI_* functions, never MPI_* (those are ours: calling
//   one would recurse into the interposer), and sends only on h.comm, the
//   private duplicate, or on the sub-communicators in the Hierarchy.
// - It handles every rank count and cluster split, 1 cluster included,
//   clusters of different sizes, count 0, and any datatype MPI allows for
//   the call. Reductions are only handed commutative ops (the selector
//   sends non-commutative ones to MPICH), but may get any predefined or
//   user-defined op and derived datatypes; reduce locally with
//   PMPI_Reduce_local.
// - It crosses the WAN with at most t.wan_senders concurrent senders per
//   cluster pair, and brackets its WAN phases with a WanShare (pacing.hpp).
#pragma once

#include "hierarchy.hpp"
#include "schedule.hpp"
#include "tuning.hpp"

#include <mpi.h>

#include <memory>

namespace hashi::coll::algo {

// ---- bcast -------------------------------------------------------------
// Single leader: the root sends to one leader per remote cluster, then each
// cluster broadcasts locally. One WAN crossing; for short messages.
int bcast_leader(void* buf, int count, MPI_Datatype type, int root, const Hierarchy& h, const Tuning& t);
// Matsuda et al. 2006 (van de Geijn modified for the WAN): scatter in the
// root's cluster onto L lanes, lane j sends piece j to lane j of every other
// cluster, allgather in every cluster; pipelined by segments.
int bcast_matsuda(void* buf, int count, MPI_Datatype type, int root, const Hierarchy& h, const Tuning& t);

// ---- allreduce ---------------------------------------------------------
// Reduce to a leader per cluster, exchange between leaders, local bcast.
int allreduce_leader(
    const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, const Hierarchy& h, const Tuning& t);
// Matsuda et al. 2006 (Rabenseifner modified for the WAN): reduce-scatter
// in every cluster onto L lanes, lane j of every cluster exchanges and
// reduces piece j with lane j of the others, allgather in every cluster.
int allreduce_matsuda(
    const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, const Hierarchy& h, const Tuning& t);
// Nguyen et al. multi-leader: ring reduce-scatter in the cluster, ring
// reduce-scatter + ring allgather across clusters among same-lane ranks
// (L concurrent rings), ring allgather in the cluster.
int allreduce_lr_lr(
    const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, const Hierarchy& h, const Tuning& t);
// As lr_lr, with Rabenseifner (recursive halving/doubling) across clusters.
int allreduce_lr_rab(
    const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, const Hierarchy& h, const Tuning& t);
// As lr_lr, with the data cut into segments whose phases overlap.
int allreduce_lr_lr_pipe(
    const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, const Hierarchy& h, const Tuning& t);
// A flat ring (reduce-scatter + allgather over all ranks, topology-blind):
// the baseline the multi-leader algorithms are measured against.
int allreduce_ring(
    const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, const Hierarchy& h, const Tuning& t);

// ---- reduce, reduce_scatter_block --------------------------------------
// Reduce-scatter in every cluster onto holders (lanes; the root's cluster's
// start at the root), remote holders send the overlapping parts of their
// reduced pieces to the root cluster's holders (one WAN crossing per remote
// cluster), which reduce them and send them to the root; segmented.
int reduce_hier(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
    const Hierarchy& h, const Tuning& t);
// Reduce-scatter in every cluster gives each rank its block summed over
// its cluster and each lane its share of the other clusters' blocks; lanes
// send those partial sums straight to the owning ranks (each byte crosses
// the WAN once, at most L senders per cluster), which add them.
int reduce_scatter_block_hier(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
    const Hierarchy& h, const Tuning& t);

// ---- allgather(v) ------------------------------------------------------
// Gather inside every cluster, exchange each cluster's block over the WAN
// on lanes (every byte crosses each cluster pair once), share locally.
int allgather_hier(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
    MPI_Datatype recvtype, const Hierarchy& h, const Tuning& t);
int allgatherv_hier(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
    const int* displs, MPI_Datatype recvtype, const Hierarchy& h, const Tuning& t);

// ---- alltoall(v) -------------------------------------------------------
// Blocks inside a cluster go directly. Blocks to other clusters leave from
// at most L lanes per cluster: lane l sends, straight to every remote rank,
// the blocks of the ranks at lane positions l, l+L, ... (which hand them to
// it first when they are not lanes themselves). Every block crosses the
// WAN once, and no node link carries a remote block twice when every rank
// is a lane (one rank per node), unlike a shuffle onto lane pairs.
int alltoall_hier(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
    MPI_Datatype recvtype, const Hierarchy& h, const Tuning& t);
int alltoallv_hier(const void* sendbuf, const int* sendcounts, const int* sdispls, MPI_Datatype sendtype, void* recvbuf,
    const int* recvcounts, const int* rdispls, MPI_Datatype recvtype, const Hierarchy& h, const Tuning& t);
// One node: every rank reads its block from every other rank's send buffer
// with process_vm_readv (one copy; MPICH 4.0.2's shared memory makes two,
// cell by cell). Falls back to MPICH's, on every rank alike, for several
// nodes, in-place, non-contiguous types, or a kernel that refuses the read.
int alltoall_cma(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
    MPI_Datatype recvtype, const Hierarchy& h);

// ---- barrier -----------------------------------------------------------
// Node, then cluster, then one dissemination among cluster leaders (one
// WAN latency per round of ceil(log2 S)), then release back down.
int barrier_hier(const Hierarchy& h, const Tuning& t);

// ---- nonblocking forms -------------------------------------------------
// Each builds the Schedule of one call (messages on h.nb_comm with `tag`);
// nonblocking.cpp runs it behind the user's request. The same rules as
// above hold, except that they return a schedule instead of running it.
// In every cluster data moves on a ClusterTree (cluster_tree.hpp) rooted
// at the cluster's entry: binomial for one segment, a chain for several.
std::unique_ptr<Schedule> ibcast_hier(
    void* buf, int count, MPI_Datatype type, int root, const Hierarchy& h, const Tuning& t, int tag);
std::unique_ptr<Schedule> ireduce_hier(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
    int root, const Hierarchy& h, const Tuning& t, int tag);
std::unique_ptr<Schedule> iallreduce_hier(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
    const Hierarchy& h, const Tuning& t, int tag);
std::unique_ptr<Schedule> ibarrier_hier(const Hierarchy& h, int tag);

} // namespace hashi::coll::algo
