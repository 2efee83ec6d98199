// SPDX-License-Identifier: BSD-3-Clause
// Building blocks of the allreduce algorithms (allreduce_*.cpp): schedules
// of nonblocking steps, an engine that runs several of them at once (the
// segments of a pipeline), ring reduce-scatter and allgather over any
// ordered list of ranks with any element count per block, and the lane
// layout that the hierarchical (multi-leader) algorithms share.
//
// A schedule is a list of steps; a step is a set of transfers that are all
// posted at once, followed by local reductions that run when all of them
// have completed. Every rank builds its own schedule; the steps of two
// ranks match because both derive them from the same arguments.
#pragma once

#include "../datatype.hpp"
#include "../hierarchy.hpp"
#include "../tuning.hpp"

#include <mpi.h>

#include <cstddef>
#include <functional>
#include <vector>

namespace hashi::coll::algo {

// Element range [begin, begin + count) of a buffer.
struct Block {
    MPI_Aint begin = 0;
    int count = 0;
};

struct Transfer {
    int peer = 0; // rank in h.comm
    void* buf = nullptr;
    int count = 0; // elements
    bool send = false;
};

// inout = in (op) inout, elementwise, once the step's transfers are done.
struct LocalReduce {
    const void* in = nullptr;
    void* inout = nullptr;
    int count = 0;
};

struct Step {
    std::vector<Transfer> transfers;
    std::vector<LocalReduce> reduces;
};
using Schedule = std::vector<Step>;

// Builds the schedule of chain `chain` (a segment of the data) into `out`;
// `temp` is that chain's scratch space (temp_elems elements, see
// run_chains), reused by consecutive steps.
using ChainBuilder = std::function<void(int chain, void* temp, Schedule& out)>;

// The type to send elements of `type` with. MPICH 4.0.2 crashes (SIGSEGV
// in MPIDI_isend) sending the predefined pair types with a hole
// (MPI_DOUBLE_INT, MPI_LONG_INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT)
// between two ranks of one node; a duplicate of the type, same layout,
// goes through. Messages use it; reductions keep the original, which the
// op (MINLOC, MAXLOC) requires.
class WireType {
public:
    explicit WireType(MPI_Datatype type);
    ~WireType();
    WireType(const WireType&) = delete;
    WireType& operator=(const WireType&) = delete;
    MPI_Datatype get() const { return dup_ != MPI_DATATYPE_NULL ? dup_ : type_; }

private:
    MPI_Datatype type_;
    MPI_Datatype dup_ = MPI_DATATYPE_NULL;
};

// Runs `chains` schedules on `comm`, at most `window` of them in flight,
// each step of each as soon as its predecessor in the same chain is done.
// Chain c uses tag c % window and starts when chain c - window is done, so
// chains that share a tag never overlap on one rank and MPI's
// non-overtaking order keeps their messages apart.
// Every rank must pass the same chains and window.
int run_chains(MPI_Comm comm, MPI_Datatype type, MPI_Op op, int chains, int window, MPI_Aint temp_elems,
    const ChainBuilder& build);

// Ring reduce-scatter over `ranks` (comm ranks in ring order; I am
// ranks[pos]): afterwards I hold blocks[pos] reduced over all of them.
// Blocks may have any counts, zero included; received blocks go through
// `temp` (at least the largest block).
void ring_reduce_scatter(Schedule& s, const std::vector<int>& ranks, int pos, const std::vector<Block>& blocks,
    void* buf, void* temp, const TypeInfo& ti);
// Ring allgather: I hold blocks[pos] and receive every other block in place.
void ring_allgather(Schedule& s, const std::vector<int>& ranks, int pos, const std::vector<Block>& blocks, void* buf,
    const TypeInfo& ti);

// One step: I (peers[me]) send block b to every other peer and reduce the
// copies they send me into mine, in the order of `peers` (the same order
// on every peer, so all of them get the same bits). temp: (n-1)*b.count.
void exchange_reduce(
    Schedule& s, const std::vector<int>& peers, int me, Block b, void* buf, void* temp, const TypeInfo& ti);

// Ring reduce-scatter then ring allgather of block b among `peers` (I am
// peers[me]), b cut into one sub-block per peer. temp: b.count / n + 1.
void ring_allreduce(
    Schedule& s, const std::vector<int>& peers, int me, Block b, void* buf, void* temp, const TypeInfo& ti);

// The hierarchical allreduce skeleton shared by matsuda, lr_lr, lr_rab and
// lr_lr_pipe. Per segment: ring reduce-scatter inside the cluster onto the
// ranks of the cluster (blocks grouped by lane), the blocks of each lane
// group gathered onto its lane, the WAN phase among lane j of every
// cluster on lane piece j, the reverse scatter, ring allgather in the
// cluster. L = min(t.wan_senders, smallest cluster size) lanes.
//
// The WAN phase appends steps for piece `b` among `peers` (lane j of every
// cluster, in cluster order; I am peers[me]); temp holds
// max(1, nclusters - 1) * b.count elements.
using WanPhase = std::function<void(
    Schedule& s, const std::vector<int>& peers, int me, Block b, void* buf, void* temp, const TypeInfo& ti)>;
struct Pipeline {
    std::size_t segment_bytes = 0; // 0: one segment
    int window = 1; // segments in flight
};
int hier_allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, const Hierarchy& h,
    const Tuning& t, Pipeline pipe, const WanPhase& wan);

// Segment size of the pipelined algorithms when the tuning gives none.
inline constexpr std::size_t default_segment_bytes = 256 * 1024;
// Bytes of segments in flight per rank: enough that the segments waiting
// for the WAN (a round trip and a rendezvous at 10 ms one way) leave
// others to keep a 100 Mbit/s NIC busy; few enough to bound the scratch
// space and outstanding requests.
inline constexpr std::size_t pipeline_bytes = 4 << 20;
// The pipeline of a segmented algorithm: the tuning's segment size (or the
// default) and as many segments in flight as fit in pipeline_bytes, at
// least 2 (so one segment's WAN phase always overlaps another's local
// phases) and at most 16.
Pipeline pipeline(const Tuning& t);

// The start of every allreduce here: copies sendbuf into recvbuf unless
// the call is in place, so the algorithm works in recvbuf alone. Sets
// `work` to false when that is all there is to do (no data, or one rank).
int start_in_recvbuf(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, const Hierarchy& h, bool& work);

} // namespace hashi::coll::algo
