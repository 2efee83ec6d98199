// SPDX-License-Identifier: BSD-3-Clause
// A nonblocking collective as a graph of steps: point-to-point sends and
// receives, and local reductions and copies, each started when the steps
// it depends on are done. The nonblocking algorithms build one per call;
// nonblocking.cpp runs it behind an MPI request and advances it whenever
// the application tests or waits on that request.
//
// Messages between two ranks in one direction on one tag are matched in
// the order they were posted (MPI's non-overtaking rule), so the schedule
// posts them in the order the algorithm added them: a send or receive
// waits, besides its dependencies, for the previous one of its stream
// (same kind, peer and tag) to be posted. Algorithms can then cut a
// message into segments that all carry the same tag.
#pragma once

#include "datatype.hpp"

#include <mpi.h>

#include <cstddef>
#include <initializer_list>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

namespace hashi::coll {

class Schedule {
public:
    using Step = int;
    static constexpr Step none = -1;

    explicit Schedule(MPI_Comm comm) : comm_(comm) { }
    // Requests still posted (only after a failure) are cancelled and freed.
    ~Schedule();
    Schedule(const Schedule&) = delete;
    Schedule& operator=(const Schedule&) = delete;

    // Each adder returns the new step's handle. `deps` are steps that
    // must be done first; `none` entries are ignored.
    Step send(const void* buf, int count, MPI_Datatype type, int peer, int tag, std::initializer_list<Step> deps = {});
    Step recv(void* buf, int count, MPI_Datatype type, int peer, int tag, std::initializer_list<Step> deps = {});
    // inout[i] = in[i] op inout[i] (PMPI_Reduce_local).
    Step reduce(
        const void* in, void* inout, int count, MPI_Datatype type, MPI_Op op, std::initializer_list<Step> deps = {});
    // dst = src, element by element with the type's layout.
    Step copy(const void* src, void* dst, int count, MPI_Datatype type, std::initializer_list<Step> deps = {});
    // One more dependency of `step` on `dep` (before the schedule starts).
    void depend(Step step, Step dep);

    // Scratch space owned by the schedule, freed with it.
    void* scratch(MPI_Datatype type, MPI_Aint count);

    // Posts every step that can start and collects finished ones. Returns
    // true once every step is done or a step failed (error() says which).
    bool progress();
    bool done() const { return finished_ == steps_.size() || error_ != MPI_SUCCESS; }
    int error() const { return error_; }
    std::size_t size() const { return steps_.size(); }

private:
    enum class Kind { send, recv, reduce, copy };
    enum class State { waiting, posted, done };
    struct StepRec {
        Kind kind = Kind::copy;
        const void* in = nullptr;
        void* out = nullptr;
        int count = 0;
        MPI_Datatype type = MPI_DATATYPE_NULL;
        MPI_Op op = MPI_OP_NULL;
        int peer = 0, tag = 0;
        int unmet = 0; // dependencies not yet done
        Step stream_prev = none, stream_next = none; // post order of its stream
        std::vector<Step> dependents;
        State state = State::waiting;
    };

    Step add(StepRec r, std::initializer_list<Step> deps);
    // The type to send `type` as: a duplicate for the pair types MPICH
    // 4.0.2 crashes on in same-node point-to-point transfers (see
    // WireType in algorithms/ring_blocks.hpp), else `type` itself.
    MPI_Datatype wire(MPI_Datatype type);
    bool ready(const StepRec& s) const
    {
        return s.state == State::waiting && s.unmet == 0 &&
            (s.stream_prev == none || steps_[s.stream_prev].state != State::waiting);
    }
    void start(Step s);
    void finish(Step s);
    void post_ready();

    MPI_Comm comm_;
    std::vector<StepRec> steps_;
    std::map<std::tuple<int, int, int>, Step> stream_last_; // (kind, peer, tag) -> last step
    std::vector<Step> ready_; // steps to start, in the order they became ready
    std::vector<MPI_Request> requests_; // posted sends and receives
    std::vector<Step> request_step_; // requests_[i] belongs to step request_step_[i]
    std::vector<Scratch> scratch_;
    std::map<MPI_Datatype, MPI_Datatype> wire_; // pair type -> its duplicate
    std::size_t finished_ = 0;
    int error_ = MPI_SUCCESS;
    bool started_ = false;
};

} // namespace hashi::coll
