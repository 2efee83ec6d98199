// SPDX-License-Identifier: BSD-3-Clause
// What a rank waiting inside MPI does with its core: the idle policy of the
// domain's manual progress (domain_obj::progress).
//
// Contract: after every progress call, after_poll(now, moved) says whether
// the caller returns at once (spin), calls sched_yield (yield) or sleeps for
// nap_ns (nap); after a yield or a nap the caller reports how long it took
// (gave_away). It gives the core away only to a caller that waits, that
// is, polls back to back without progress for longer than its spin; and it
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
// How long it spins is chosen from what the rank observes (unless
// FI_HASHI_SPIN_US fixes it), told by sharing(): whether this machine has
// more ranks of the job than CPUs to run them (engine/machine_census.hpp).
//  - More ranks than CPUs (8 ranks on 2 cores in the testbed): the core it
//    gives away goes to a rank of the same job, which may be the one that
//    holds up this wait. Spin crowded_spin_ns, about MPICH's way from one
//    progress call to the next: on 8 ranks on 2 cores, an 8-byte
//    allreduce took 0.15 ms so, against 0.57 ms with a 50 us spin and
//    6.9 ms with 1 ms (src/transport/README.md, Progress).
//  - Otherwise (or unknown) every rank has a CPU, and whoever takes a core
//    given away is somebody else's task: each nap then costs the wait
//    about 70 us (20 us asked, the kernel's timer slack on top), so spin
//    own_cpu_spin_ns first. Beside two busy loops a ping-pong took 10-12
//    us so, 12-17 us with 20 us, 18-22 us with 10 us and 100 us with 5 us;
//    300 us and more gained nothing, and a spin that grew with the cost of
//    naps (a moving average, the ski-rental rule) ran away to its cap of
//    1 ms once both ranks shared a core, 1 ms a message (tried, not kept).
// Polls further apart than gap_ns are not a waiting loop (MPI_Test between
// pieces of computation, or a caller that sleeps between polls itself, as
// SCASH does): they restart the idle run, and nothing is given away inside
// MPI, where a yield would hold MPICH's global lock while others of the
// process wait for it.
//
// Pure state and arithmetic on the times and counts given, no clock and
// no system call (domain.cpp does those), so it is unit-tested on its own.
// Progress thread only (MPICH calls progress under its global lock):
// nothing locked.
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
    // The spins chosen (above).
    static constexpr std::uint64_t crowded_spin_ns = 5'000;
    static constexpr std::uint64_t own_cpu_spin_ns = 50'000;

    // The spin chosen from what the rank observes.
    idle_wait() noexcept = default;
    // A fixed spin (FI_HASHI_SPIN_US).
    explicit idle_wait(std::uint64_t fixed_spin_ns) noexcept : fixed_(true), fixed_spin_ns_(fixed_spin_ns) {}

    action after_poll(std::uint64_t now_ns, bool moved) noexcept;
    // The yield or nap that after_poll asked for took `took_ns`.
    void gave_away(action done, std::uint64_t took_ns) noexcept;
    // The job has `ranks` ranks on this machine, which may run on `cpus`
    // CPUs (0 and 0: unknown).
    void sharing(unsigned ranks, unsigned cpus) noexcept
    {
        ranks_ = ranks;
        cpus_ = cpus;
        crowded_ = cpus != 0 && ranks > cpus;
    }
    // What sharing() was last told (0 0: never, or unknown).
    unsigned ranks_seen() const noexcept { return ranks_; }
    unsigned cpus_seen() const noexcept { return cpus_; }

    // How long an idle run spins before it gives the core away, now.
    std::uint64_t spin_ns() const noexcept;
    bool fixed() const noexcept { return fixed_; }
    bool crowded() const noexcept { return crowded_; }
    bool contended() const noexcept { return contended_; }
    std::uint64_t yields() const noexcept { return yields_; }
    std::uint64_t naps() const noexcept { return naps_; }

private:
    bool fixed_ = false;
    std::uint64_t fixed_spin_ns_ = 0;
    bool crowded_ = false; // more ranks of the job on this machine than CPUs
    unsigned ranks_ = 0, cpus_ = 0;
    std::uint64_t idle_since_ = 0; // 0: not idle (the last poll moved something)
    std::uint64_t last_poll_ = 0;
    bool contended_ = false;
    unsigned since_probe_ = 0;
    std::uint64_t yields_ = 0, naps_ = 0;
};

} // namespace hashi::fi
