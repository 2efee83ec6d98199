// SPDX-License-Identifier: BSD-3-Clause
// Who may touch a domain's objects: the application inside one of our
// libfabric calls, or the flusher thread (engine/held_flusher.hpp), never
// both.
//
// Contract: every entry point of the ops tables of a domain's objects
// (endpoints, completion queues, counters, address vectors, memory
// regions, the domain's own but close) runs inside the gate of its domain
// (gated<F>, below); the flusher enters only with try_flusher() and only
// when the application is outside. So the engine, its queues and the
// completion queues stay single-threaded as FI_THREAD_DOMAIN promises them,
// with a second thread that can still write what send coalescing holds
// while the application computes or waits outside MPI.
//
// The application's side costs a compare-and-swap and a few relaxed loads
// and stores per call. It is re-entrant on a thread (a call that reaches another entry
// point of the same domain, such as a close that closes what it owns).
// Two application threads on one domain at once (which FI_THREAD_DOMAIN
// rules out) would take turns. The flusher's turns are short (a few
// writes); an application call that finds it inside spins, then yields.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>

namespace hashi::fi {

inline void cpu_relax() noexcept
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

class domain_gate {
public:
    // The application's side, through gate_guard: false when this thread
    // is inside already (a call from within a call), which then must not
    // leave.
    bool enter() noexcept
    {
        // pthread_self() is a load from the thread pointer, cheaper than a
        // thread_local in a dlopen()ed module. Only the thread that wrote
        // owner_ can find its own id there.
        const unsigned long self = pthread_self();
        if (owner_.load(std::memory_order_relaxed) == self)
            return false;
        unsigned spins = 0;
        for (;;) {
            int expected = free;
            if (state_.compare_exchange_weak(expected, app, std::memory_order_acquire, std::memory_order_relaxed))
                break;
            if (++spins >= 64) {
                spins = 0;
                sched_yield();
            } else {
                cpu_relax();
            }
        }
        owner_.store(self, std::memory_order_relaxed);
        return true;
    }
    void leave() noexcept
    {
        owner_.store(0, std::memory_order_relaxed);
        state_.store(free, std::memory_order_release);
    }

    // The flusher's side: false while the application is inside.
    bool try_flusher() noexcept
    {
        int expected = free;
        return state_.compare_exchange_strong(expected, flusher, std::memory_order_acquire, std::memory_order_relaxed);
    }
    void leave_flusher() noexcept { state_.store(free, std::memory_order_release); }

private:
    static constexpr int free = 0, app = 1, flusher = 2;
    std::atomic<int> state_ {free};
    std::atomic<unsigned long> owner_ {0};
};

// Holds `g` for the scope of one entry point; a no-op when this thread
// holds it already, or for objects without a domain.
class gate_guard {
public:
    explicit gate_guard(domain_gate* g) noexcept : g_(g != nullptr && g->enter() ? g : nullptr) {}
    ~gate_guard()
    {
        if (g_ != nullptr)
            g_->leave();
    }
    gate_guard(const gate_guard&) = delete;
    gate_guard& operator=(const gate_guard&) = delete;

private:
    domain_gate* g_;
};

// The gate of the domain an object belongs to (domain_gate.cpp); null for
// what has none (a fabric, an event queue) or is not ours.
domain_gate* gate_of(fid* f) noexcept;
domain_gate* gate_of(fid_ep* ep) noexcept;
domain_gate* gate_of(fid_cq* cq) noexcept;
domain_gate* gate_of(fid_cntr* c) noexcept;
domain_gate* gate_of(fid_av* av) noexcept;
domain_gate* gate_of(fid_mr* mr) noexcept;
domain_gate* gate_of(fid_domain* d) noexcept;
// A passive endpoint: we offer none (cm_listen, cm_reject refuse).
inline domain_gate* gate_of(fid_pep*) noexcept
{
    return nullptr;
}

// gated<F>: F, run inside the gate of the domain of its first argument.
// For the ops tables:
//     .send = gated<tag_send>,
template <auto Fn> struct gated_entry;
template <class R, class First, class... Rest, R (*Fn)(First, Rest...)> struct gated_entry<Fn> {
    static R call(First first, Rest... rest)
    {
        const gate_guard g(gate_of(first));
        return Fn(first, rest...);
    }
};
template <class R, class First, class... Rest, R (*Fn)(First, Rest...) noexcept> struct gated_entry<Fn> {
    static R call(First first, Rest... rest) noexcept
    {
        const gate_guard g(gate_of(first));
        return Fn(first, rest...);
    }
};
template <auto Fn> inline constexpr auto gated = &gated_entry<Fn>::call;

} // namespace hashi::fi
