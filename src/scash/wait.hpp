// SPDX-License-Identifier: BSD-3-Clause
// How SCASH waits for MPI, in both of a process's threads.
//
// Why this exists: MPICH 4.0.2 protects all of MPI with one global mutex,
// and the hashi provider's progress called sched_yield once idle for 50 us,
// with that mutex held. When the service thread polled (MPI_Improbe) while
// the application thread waited in MPI (a barrier's allgather, a diff's
// ack), each thread spent its time slices parked on the mutex the other
// one held while yielding; on an oversubscribed node a process then served
// its peers a few times a second, and LU runs took 20-300x their median
// (bench/scash/README.md, "The stall").
//
// So only one thread of a process polls MPI at a time:
//  - the application thread waits through wait_all / wait_message, which
//    take the *turn*: while it waits it serves the requests addressed to
//    this process itself (so no wait can depend on the service thread),
//    and the service thread blocks on a futex, using no CPU and no MPI;
//  - the service thread polls only while the application thread computes.
// Both back off alike when nothing arrives (Backoff): a few polls, then
// sleeps that grow to kMaxSleep, outside MPI, so a waiting thread gives
// its core to the computing ones instead of yielding in a loop.
#ifndef HASHI_SCASH_WAIT_HPP
#define HASHI_SCASH_WAIT_HPP

#include <mpi.h>

#include <chrono>
#include <span>

namespace hashi::scash {

struct Runtime;

// Idle policy of a polling loop: spin for kSpinPolls empty polls (a reply
// on the same node comes within microseconds), then sleep, doubling from
// kMinSleep to kMaxSleep. kMaxSleep bounds the latency a sleeping poller
// adds to a request; 200 us against a page round trip of 100-300 us
// under load.
class Backoff {
public:
    static constexpr unsigned kSpinPolls = 16;
    static constexpr std::chrono::microseconds kMinSleep {10}, kMaxSleep {200};

    void idle();
    void reset() { empty_ = 0; sleep_ = kMinSleep; }
    void keep_polling() { polling_ = true; }

private:
    bool polling_ = false;
    unsigned empty_ = 0;
    std::chrono::microseconds sleep_ = kMinSleep;
};

// What a wait is for. Replying: the peer must act (send a reply, an ack,
// its part of a collective), so the wait backs off. Sending: this
// process's own large sends (diffs) move only while it polls MPI, so the
// wait polls without sleeping until they are out.
enum class Waiting { Replying, Sending };

// Waits until every request completes, serving incoming requests
// meanwhile. Application thread only. False on an MPI failure.
bool wait_all(Runtime& rt, std::span<MPI_Request> requests, Waiting how = Waiting::Replying);

// Waits for a message from source with tag on the protocol communicator
// (a reply whose size is not known ahead), serving meanwhile; matched-probe
// semantics (receive it with MPI_Mrecv). Application thread only.
bool wait_message(Runtime& rt, int source, int tag, MPI_Message& m, MPI_Status& st);

// MPI_Allreduce and MPI_Barrier on the collective communicator, waited for
// that way: every collective of SCASH is (a process in it may still be
// asked for pages by one that has not arrived yet).
bool serving_allreduce(Runtime& rt, const void* in, void* out, int count, MPI_Datatype type, MPI_Op op);
bool serving_barrier(Runtime& rt);

// The service thread's loop (service.cpp runs it until Stop).
void serve_until_stopped(Runtime& rt);

} // namespace hashi::scash
#endif
