// SPDX-License-Identifier: BSD-3-Clause
#include "schedule.hpp"

#include <algorithm>

namespace hashi::coll {

Schedule::Step Schedule::add(StepRec r, std::initializer_list<Step> deps)
{
    const Step id = static_cast<Step>(steps_.size());
    if (r.kind == Kind::send || r.kind == Kind::recv) {
        auto [it, fresh] = stream_last_.try_emplace({static_cast<int>(r.kind), r.peer, r.tag}, id);
        if (!fresh) {
            r.stream_prev = it->second;
            steps_[it->second].stream_next = id;
            it->second = id;
        }
    }
    steps_.push_back(std::move(r));
    for (Step d : deps)
        depend(id, d);
    return id;
}

Schedule::~Schedule()
{
    for (std::size_t i = 0; i < requests_.size(); ++i) {
        if (steps_[request_step_[i]].kind == Kind::recv)
            PMPI_Cancel(&requests_[i]);
        PMPI_Request_free(&requests_[i]);
    }
    for (auto& [type, dup] : wire_)
        PMPI_Type_free(&dup);
}

MPI_Datatype Schedule::wire(MPI_Datatype type)
{
    for (MPI_Datatype pair : {MPI_DOUBLE_INT, MPI_LONG_INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT}) {
        if (type != pair || pair == MPI_DATATYPE_NULL)
            continue;
        auto it = wire_.find(type);
        if (it != wire_.end())
            return it->second;
        MPI_Datatype dup = MPI_DATATYPE_NULL;
        if (PMPI_Type_dup(type, &dup) != MPI_SUCCESS || PMPI_Type_commit(&dup) != MPI_SUCCESS)
            return type;
        wire_.emplace(type, dup);
        return dup;
    }
    return type;
}

void Schedule::depend(Step step, Step dep)
{
    if (dep == none)
        return;
    steps_[dep].dependents.push_back(step);
    ++steps_[step].unmet;
}

Schedule::Step Schedule::send(
    const void* buf, int count, MPI_Datatype type, int peer, int tag, std::initializer_list<Step> deps)
{
    StepRec r;
    r.kind = Kind::send;
    r.in = buf, r.count = count, r.type = wire(type), r.peer = peer, r.tag = tag;
    return add(std::move(r), deps);
}

Schedule::Step Schedule::recv(
    void* buf, int count, MPI_Datatype type, int peer, int tag, std::initializer_list<Step> deps)
{
    StepRec r;
    r.kind = Kind::recv;
    r.out = buf, r.count = count, r.type = wire(type), r.peer = peer, r.tag = tag;
    return add(std::move(r), deps);
}

Schedule::Step Schedule::reduce(
    const void* in, void* inout, int count, MPI_Datatype type, MPI_Op op, std::initializer_list<Step> deps)
{
    StepRec r;
    r.kind = Kind::reduce;
    r.in = in, r.out = inout, r.count = count, r.type = type, r.op = op;
    return add(std::move(r), deps);
}

Schedule::Step Schedule::copy(
    const void* src, void* dst, int count, MPI_Datatype type, std::initializer_list<Step> deps)
{
    StepRec r;
    r.kind = Kind::copy;
    r.in = src, r.out = dst, r.count = count, r.type = type;
    return add(std::move(r), deps);
}

void* Schedule::scratch(MPI_Datatype type, MPI_Aint count)
{
    scratch_.emplace_back(type, count);
    return scratch_.back().data();
}

void Schedule::finish(Step s)
{
    steps_[s].state = State::done;
    ++finished_;
    for (Step d : steps_[s].dependents)
        if (--steps_[d].unmet == 0 && ready(steps_[d]))
            ready_.push_back(d);
}

void Schedule::start(Step s)
{
    StepRec& r = steps_[s];
    int err = MPI_SUCCESS;
    switch (r.kind) {
    case Kind::send:
    case Kind::recv: {
        MPI_Request req = MPI_REQUEST_NULL;
        err = r.kind == Kind::send ? PMPI_Isend(r.in, r.count, r.type, r.peer, r.tag, comm_, &req)
                                   : PMPI_Irecv(r.out, r.count, r.type, r.peer, r.tag, comm_, &req);
        if (err != MPI_SUCCESS)
            break;
        r.state = State::posted;
        requests_.push_back(req);
        request_step_.push_back(s);
        // The next message of the stream may go now (if its inputs are done).
        if (r.stream_next != none && ready(steps_[r.stream_next]))
            ready_.push_back(r.stream_next);
        return;
    }
    case Kind::reduce:
        if (r.count > 0)
            err = PMPI_Reduce_local(r.in, r.out, r.count, r.type, r.op);
        break;
    case Kind::copy:
        err = copy_elements(r.in, r.out, r.count, r.type);
        break;
    }
    if (err != MPI_SUCCESS) {
        error_ = err;
        return;
    }
    finish(s);
}

void Schedule::post_ready()
{
    // start() may make more steps ready; they are appended and taken in turn.
    for (std::size_t i = 0; i < ready_.size() && error_ == MPI_SUCCESS; ++i)
        if (steps_[ready_[i]].state == State::waiting)
            start(ready_[i]);
    ready_.clear();
}

bool Schedule::progress()
{
    if (!started_) {
        started_ = true;
        for (Step s = 0; s < static_cast<Step>(steps_.size()); ++s)
            if (ready(steps_[s]))
                ready_.push_back(s);
    }
    std::vector<int> indices;
    while (error_ == MPI_SUCCESS) {
        post_ready();
        if (done())
            break;
        if (requests_.empty()) {
            // Nothing in flight and nothing startable, yet steps remain: a
            // dependency cycle in the algorithm. Fail rather than hang.
            error_ = MPI_ERR_INTERN;
            break;
        }
        indices.resize(requests_.size());
        int completed = 0;
        const int err = PMPI_Testsome(
            static_cast<int>(requests_.size()), requests_.data(), &completed, indices.data(), MPI_STATUSES_IGNORE);
        if (err != MPI_SUCCESS) {
            error_ = err;
            break;
        }
        if (completed == MPI_UNDEFINED || completed == 0)
            return false;
        for (int i = 0; i < completed; ++i)
            finish(request_step_[indices[i]]);
        // Drop the completed requests (Testsome set them to MPI_REQUEST_NULL).
        std::size_t keep = 0;
        for (std::size_t i = 0; i < requests_.size(); ++i)
            if (requests_[i] != MPI_REQUEST_NULL) {
                requests_[keep] = requests_[i];
                request_step_[keep] = request_step_[i];
                ++keep;
            }
        requests_.resize(keep);
        request_step_.resize(keep);
    }
    return true;
}

} // namespace hashi::coll
