// SPDX-License-Identifier: BSD-3-Clause
// The turn between a process's two threads and the idle policy (wait.hpp
// says why).
#include "scash/wait.hpp"

#include "scash/protocol.hpp"
#include "scash/runtime.hpp"

#include <cstdio>
#include <algorithm>
#include <mutex>
#include <thread>
#include <vector>

namespace hashi::scash {

// The provider's own idle policy (src/transport/engine/idle_wait.hpp) gives
// nothing away between SCASH's polls, which come apart by Backoff's sleeps;
// inside a blocking call (a large diff's MPI_Mrecv, a reply's MPI_Send) it
// yields or naps, as the core's other tasks warrant. SCASH used to turn
// the provider's yields off (FI_HASHI_SPIN_US=10000000) because each one
// handed a CPU-bound neighbour a whole time slice; spinning instead made
// static homes 1.6x slower at LU n=1024 (4 processes on 2 cores, the
// diffs' receivers spinning while their senders needed the core), and the
// provider's naps now serve both cases (bench/scash/README.md).

void Backoff::idle()
{
    if (++empty_ <= kSpinPolls || polling_)
        return;
    std::this_thread::sleep_for(sleep_);
    sleep_ = std::min(sleep_ * 2, kMaxSleep);
}

namespace {

enum class Polled { Nothing, Served, Stop, Failed };

// One MPI_Improbe for a request to this process; serves it if there is one.
Polled serve_one(Runtime& rt, std::vector<std::byte>& buf)
{
    int flag = 0;
    MPI_Message m;
    MPI_Status st;
    if (MPI_Improbe(MPI_ANY_SOURCE, kTagRequest, rt.proto, &flag, &m, &st) != MPI_SUCCESS)
        return Polled::Failed;
    if (!flag)
        return Polled::Nothing;
    int n = 0;
    MPI_Get_count(&st, MPI_BYTE, &n);
    buf.resize(std::size_t(n));
    if (MPI_Mrecv(buf.data(), n, MPI_BYTE, &m, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return Polled::Failed;
    return serve_request(rt, st.MPI_SOURCE, buf) ? Polled::Served : Polled::Stop;
}

// The application thread's turn: the service thread stays off MPI while
// it is held. app_waiting is raised before the mutex is taken so that the
// service thread, between two polls, parks instead of taking the mutex
// again ahead of the application thread.
class AppTurn {
public:
    explicit AppTurn(Runtime& rt) : rt_(rt)
    {
        rt_.app_waiting.store(true, std::memory_order_release);
        rt_.turn.lock();
    }
    ~AppTurn()
    {
        rt_.turn.unlock();
        rt_.app_waiting.store(false, std::memory_order_release);
        rt_.app_waiting.notify_one();
    }
    AppTurn(const AppTurn&) = delete;
    AppTurn& operator=(const AppTurn&) = delete;

private:
    Runtime& rt_;
};

// Polls `done` until it says yes, serving requests in between. A Stop can
// only come from this process's own scash_finalize, which sends it after
// its last wait; the application thread never takes it.
template <class Done>
bool wait_serving(Runtime& rt, Done done, bool moving = false)
{
    AppTurn turn(rt);
    std::vector<std::byte> buf;
    Backoff backoff;
    if (moving)
        backoff.keep_polling();
    for (;;) {
        int finished = 0;
        if (!done(finished))
            return false;
        if (finished)
            return true;
        switch (serve_one(rt, buf)) {
        case Polled::Served:
            backoff.reset();
            break;
        case Polled::Nothing:
            backoff.idle();
            break;
        case Polled::Stop:
            std::fprintf(stderr, "scash: internal error: the application thread received its service thread's Stop\n");
            return false;
        case Polled::Failed:
            return false;
        }
    }
}

} // namespace

bool wait_all(Runtime& rt, std::span<MPI_Request> requests, Waiting how)
{
    return wait_serving(rt, [&](int& finished) {
        return MPI_Testall(int(requests.size()), requests.data(), &finished, MPI_STATUSES_IGNORE) == MPI_SUCCESS;
    }, how == Waiting::Sending);
}

bool wait_message(Runtime& rt, int source, int tag, MPI_Message& m, MPI_Status& st)
{
    return wait_serving(
        rt, [&](int& finished) { return MPI_Improbe(source, tag, rt.proto, &finished, &m, &st) == MPI_SUCCESS; });
}

bool serving_allreduce(Runtime& rt, const void* in, void* out, int count, MPI_Datatype type, MPI_Op op)
{
    MPI_Request req = MPI_REQUEST_NULL;
    return MPI_Iallreduce(in, out, count, type, op, rt.coll, &req) == MPI_SUCCESS && wait_all(rt, {&req, 1});
}

bool serving_barrier(Runtime& rt)
{
    MPI_Request req = MPI_REQUEST_NULL;
    return MPI_Ibarrier(rt.coll, &req) == MPI_SUCCESS && wait_all(rt, {&req, 1});
}

void serve_until_stopped(Runtime& rt)
{
    std::vector<std::byte> buf;
    Backoff backoff;
    for (;;) {
        // The application thread waits (and serves) or wants to: park
        // without CPU until it is done.
        rt.app_waiting.wait(true, std::memory_order_acquire);
        Polled p;
        {
            std::lock_guard turn(rt.turn);
            p = serve_one(rt, buf);
        }
        switch (p) {
        case Polled::Served:
            backoff.reset();
            break;
        case Polled::Nothing:
            backoff.idle();
            break;
        case Polled::Stop:
            return;
        case Polled::Failed:
            std::fprintf(stderr, "scash: service thread: MPI_Improbe failed; stopping\n");
            return;
        }
    }
}

} // namespace hashi::scash
