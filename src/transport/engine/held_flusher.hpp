// SPDX-License-Identifier: BSD-3-Clause
// The bound on how long send coalescing holds a send when the application
// does not call again (engine/send_coalescing.hpp).
//
// Contract: with coalescing on, no send stays held longer than about
// bound_ns, whatever the application does: a thread of the domain wakes
// bound_ns after the first send of a batch was held and, if it is still
// held and the application is outside the provider (the domain's gate,
// domain_gate.hpp), writes everything held. So MPI's progress rule holds
// for held sends as for any other: a receive matching one completes even
// if the sender never calls MPI again.
//
// Threads: note_hold() is the application's (inside the gate), the rest is
// the flusher thread's. The thread sleeps in a futex wait while nothing is
// held; while something is, it wakes at most once per bound_ns. A batch's
// first held send costs the application one atomic load, and a futex wake
// only when the thread was asleep.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>

namespace hashi::fi {

class domain_gate;

class held_flusher {
public:
    // A millisecond: long against a burst and the wait that follows it
    // (microseconds), short against anything a person or a timeout sees.
    static constexpr std::uint64_t bound_ns = 1'000'000;

    // `flush(now)` runs inside the gate: it writes what has been held since
    // `now - bound_ns` or earlier, and returns when the oldest send still
    // held was held (0: none).
    held_flusher(domain_gate& gate, std::function<std::uint64_t(std::uint64_t)> flush);
    ~held_flusher(); // stops and joins the thread
    held_flusher(const held_flusher&) = delete;
    held_flusher& operator=(const held_flusher&) = delete;

    // The application held the first send of a batch at `now`.
    void note_hold(std::uint64_t now) noexcept
    {
        if (oldest_.load(std::memory_order_relaxed) != 0)
            return; // the thread is awake, or will look again at its time
        oldest_.store(now, std::memory_order_seq_cst);
        if (asleep_.load(std::memory_order_seq_cst))
            oldest_.notify_one();
    }

private:
    void run();

    domain_gate& gate_;
    std::function<std::uint64_t(std::uint64_t)> flush_;
    // When the oldest send held since the thread last looked was held
    // (written inside the gate only, but for the stop); 0: nothing held.
    std::atomic<std::uint64_t> oldest_ {0};
    std::atomic<bool> asleep_ {false};
    std::atomic<bool> stop_ {false};
    std::thread thread_;
};

} // namespace hashi::fi
