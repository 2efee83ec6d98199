// SPDX-License-Identifier: BSD-3-Clause
// What a rank waiting inside MPI does with its core: the idle policy of the
// domain's manual progress (domain_obj::progress).
//
// Contract: after every progress call, after_poll(now, moved) says whether
// the caller returns at once (spin), calls sched_yield (yield) or sleeps for
// nap_ns (nap); after a yield or a nap the caller reports how long it took
// (gave_away). It gives the core away only to a caller that waits, that
// is, polls back to back without progress for longer than spin_ns; and it
// chooses yield or nap from what the last yield showed:
//  - a yield that came back at once found nobody else wanting the core:
//    yielding costs a system call and keeps the latency of a spinning wait,
//    so yield;
//  - a yield that took longer than slice_ns handed the core to a task that
//    ran a time slice (a CPU-bound process on the same core: CFS lets it
//    run until it is preempted, milliseconds). Every further yield would
//    cost the same, so nap instead: a short sleep gives the core away too,
//    but the wake-up preempts the other task and the wait goes on within
//    tens of microseconds. Every probe_every-th idle action while napping
//    is a yield again, to see whether the other task has gone.
// Polls further apart than gap_ns are not a waiting loop (MPI_Test between
// pieces of computation, or a caller that sleeps between polls itself, as
// SCASH does): they restart the idle run, and nothing is given away inside
// MPI, where a yield would hold MPICH's global lock while others of the
// process wait for it.
//
// Pure state and arithmetic on the times given, no clock and no system
// call (domain.cpp does those), so it is unit-tested on its own. Progress
// thread only (MPICH calls progress under its global lock): nothing locked.
#pragma once

#include <cstdint>

namespace hashi::fi {

class idle_wait {
public:
    enum class action : std::uint8_t { spin, yield, nap };

    // A ping-pong's round trip on one host is 10-30 us, MPICH's progress
    // loop between two calls into the provider a few: 20 us apart is
    // still a loop.
    static constexpr std::uint64_t gap_ns = 20'000;
    // A yield that found the core free returns in 1-5 us; a time slice
    // given away is 750 us or more (sched_min_granularity on a 2-core
    // machine); 200 us tells them apart with margin on a loaded host.
    static constexpr std::uint64_t slice_ns = 200'000;
    // Asked of nanosleep; the kernel's default timer slack (50 us) comes on
    // top, so a nap lasts about 70 us: short against a slice, long enough
    // that a napping rank takes a few percent of a core.
    static constexpr std::uint64_t nap_ns = 20'000;
    static constexpr unsigned probe_every = 64;

    explicit idle_wait(std::uint64_t spin_ns) noexcept : spin_ns_(spin_ns) {}

    action after_poll(std::uint64_t now_ns, bool moved) noexcept;
    // The yield or nap that after_poll asked for took `took_ns`.
    void gave_away(action done, std::uint64_t took_ns) noexcept;

    bool contended() const noexcept { return contended_; }
    std::uint64_t yields() const noexcept { return yields_; }
    std::uint64_t naps() const noexcept { return naps_; }

private:
    std::uint64_t spin_ns_;
    std::uint64_t idle_since_ = 0; // 0: not idle (the last poll moved something)
    std::uint64_t last_poll_ = 0;
    bool contended_ = false;
    unsigned since_probe_ = 0;
    std::uint64_t yields_ = 0, naps_ = 0;
};

} // namespace hashi::fi
