// SPDX-License-Identifier: BSD-3-Clause
#include "nonblocking.hpp"

#include <atomic>
#include <cstdio>
#include <exception>
#include <mutex>
#include <new>
#include <set>

namespace hashi::coll {

namespace {

// One nonblocking collective in flight (the generalized request's state).
struct Pending {
    std::unique_ptr<Schedule> schedule;
    const Hierarchy* h = nullptr;
    Collective collective {};
    std::string algorithm;
    MPI_Request request = MPI_REQUEST_NULL;
    std::mutex mutex; // one thread advances it at a time
    bool completed = false;
    int error = MPI_SUCCESS;
};

// Every Pending not yet completed. Recursive: completing one (under its
// own mutex) removes it while progress_nonblocking() may hold this lock.
std::recursive_mutex registry_mutex;
std::set<Pending*> in_flight;
std::atomic<int> in_flight_count {0};

void complete(Pending& p, int error)
{
    p.completed = true;
    p.error = error;
    if (error != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        PMPI_Error_string(error, text, &len);
        std::fprintf(stderr, "hashi-coll: error in nonblocking %.*s (%s): %s\n",
            static_cast<int>(name_of(p.collective).size()), name_of(p.collective).data(), p.algorithm.c_str(), text);
    }
    p.schedule.reset(); // frees the scratch buffers now, not at MPI_Wait
    {
        std::lock_guard lock(registry_mutex);
        in_flight.erase(&p);
        in_flight_count.fetch_sub(1, std::memory_order_relaxed);
    }
    unpin_hierarchy(p.h);
    PMPI_Grequest_complete(p.request);
}

// Advances p; the caller holds p.mutex.
void advance(Pending& p)
{
    if (p.completed)
        return;
    try {
        if (p.schedule->progress())
            complete(p, p.schedule->error());
    } catch (const std::bad_alloc&) {
        complete(p, MPI_ERR_NO_MEM);
    }
}

int query_fn(void* state, MPI_Status* status)
{
    auto* p = static_cast<Pending*>(state);
    // A collective's status carries no source, tag or count.
    PMPI_Status_set_elements(status, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_ANY_SOURCE;
    status->MPI_TAG = MPI_ANY_TAG;
    return p->error;
}

int free_fn(void* state)
{
    auto* p = static_cast<Pending*>(state);
    // Another thread's progress_nonblocking() may still be returning from
    // completing it: let it release the mutex first.
    {
        std::lock_guard lock(p->mutex);
    }
    delete p;
    return MPI_SUCCESS;
}

int cancel_fn(void*, int)
{
    // MPI makes cancelling a nonblocking collective erroneous; nothing to do.
    return MPI_SUCCESS;
}

int poll_fn(void* state, MPI_Status*)
{
    auto* p = static_cast<Pending*>(state);
    std::unique_lock lock(p->mutex, std::try_to_lock);
    if (lock)
        advance(*p);
    return MPI_SUCCESS;
}

// MPI_Waitall hands its generalized requests of one class to this: advance
// them all until every one is complete.
int wait_fn(int count, void** states, double, MPI_Status*)
{
    for (bool all = false; !all;) {
        all = true;
        for (int i = 0; i < count; ++i) {
            auto* p = static_cast<Pending*>(states[i]);
            std::lock_guard lock(p->mutex);
            advance(*p);
            all = all && p->completed;
        }
    }
    return MPI_SUCCESS;
}

MPIX_Grequest_class request_class()
{
    static const MPIX_Grequest_class c = [] {
        MPIX_Grequest_class k {};
        MPIX_Grequest_class_create(query_fn, free_fn, cancel_fn, poll_fn, wait_fn, &k);
        return k;
    }();
    return c;
}

} // namespace

int next_nonblocking_tag(const Hierarchy& h)
{
    static const int tag_ub = [&h] {
        int* ub = nullptr;
        int found = 0;
        PMPI_Comm_get_attr(h.nb_comm, MPI_TAG_UB, &ub, &found);
        return found && ub != nullptr ? *ub : 32767;
    }();
    return static_cast<int>(h.nb_started++ % static_cast<unsigned>(tag_ub));
}

int start_nonblocking(
    std::unique_ptr<Schedule> schedule, const Hierarchy& h, Collective c, std::string algorithm, MPI_Request* request)
{
    auto* p = new Pending;
    p->schedule = std::move(schedule);
    p->h = &h;
    p->collective = c;
    p->algorithm = std::move(algorithm);
    const int err = MPIX_Grequest_class_allocate(request_class(), p, &p->request);
    if (err != MPI_SUCCESS) {
        delete p;
        return err;
    }
    *request = p->request;
    pin_hierarchy(&h);
    {
        std::lock_guard lock(registry_mutex);
        in_flight.insert(p);
        in_flight_count.fetch_add(1, std::memory_order_relaxed);
    }
    // Post the first steps now, so messages that need nothing else (the
    // root's sends, every receive) are under way before the first test.
    std::lock_guard lock(p->mutex);
    advance(*p);
    return MPI_SUCCESS;
}

bool nonblocking_in_flight()
{
    return in_flight_count.load(std::memory_order_relaxed) > 0;
}

void progress_nonblocking()
{
    if (in_flight_count.load(std::memory_order_relaxed) == 0)
        return;
    std::lock_guard lock(registry_mutex);
    // advance() may erase the current element: step first.
    for (auto it = in_flight.begin(); it != in_flight.end();) {
        Pending* p = *it++;
        std::unique_lock plock(p->mutex, std::try_to_lock);
        if (plock)
            advance(*p);
    }
}

} // namespace hashi::coll
