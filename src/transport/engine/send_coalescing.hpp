// SPDX-License-Identifier: BSD-3-Clause
// Writing a burst of small sends with one system call (issue 18, item 2).
//
// Contract: an eager send (an inject, or a message small enough to go in
// one frame) of at most max_message bytes that directly follows another
// of the caller (no other call
// into the provider between them, at most gap_ns apart) may be held:
// queued and written later, together with the ones after it, in one
// sendmsg per peer. Everything held is written at the caller's next call
// into the provider that is not an eager send (a progress call from a wait
// or a test, a receive, a rendezvous send, RMA), once hold_frames or
// hold_bytes are held, or at the first eager send that finds the oldest
// held frame older than max_hold_ns. The first send of a burst is always
// written at once, so an isolated send (a ping-pong, one MPI_Isend before
// computing) never waits. A held send that is not an inject completes when
// it is written, as any send does.
//
// What bounds a hold: nothing in the caller's hands. A burst followed by
// computation instead of a wait (MPI_Isend to every worker, then the
// manager's own share of the work; MPI_Waitall on injects, which MPICH
// completes at once, does not reach the provider) or by a wait outside MPI
// (a shared-memory flag, a file) would leave its held sends queued. The
// domain's flusher thread (engine/held_flusher.hpp) writes them once they
// are held_flusher::bound_ns old (a millisecond), so MPI's progress rule
// holds for held sends too.
//
// Why it learns: a caller whose held sends the flusher had to write
// computes after its bursts, and each of its bursts would wait the whole
// bound. After such a flush the next `backoff` bursts are written at once;
// the backoff doubles with every flush, up to max_backoff, and never
// shrinks: a rank that mixes both kinds of bursts (the root of a small
// MPI_Bcast, whose blocking sends MPICH completes as injects, then its
// computation; and windows it waits for) would otherwise pay the bound
// again after every window. Such a caller pays the bound at most 13 times
// before it holds only one burst in 65536; a caller that waits right
// after its bursts
// (message-rate loops, halo exchanges that post sends and then wait) has
// every burst after its first send written in one system call. A release
// of the caller's own that comes later than late_ns (it was preempted, or
// computed briefly) is counted, nothing more: on an oversubscribed node
// that happens all the time and says nothing about the next burst.
//
// The policy only, on the times given: no clock and no system call (the
// engine holds and writes, send_protocol.cpp), so it is unit-tested alone.
// Progress thread only, like the rest of the engine: nothing locked.
#pragma once

#include <cstdint>

namespace hashi::fi {

class send_coalescing {
public:
    // MPICH's MPI_Isend and our inject take well under a microsecond each
    // here; consecutive sends of one loop are 0.3-2 us apart, 5 us leaves
    // margin for a preempted caller without joining sends that computation
    // separates.
    static constexpr std::uint64_t gap_ns = 5'000;
    // A window of 64 sends (OSU's message rate, MPICH's own tests) goes in
    // one or two system calls.
    static constexpr unsigned hold_frames = 64;
    // Measured (bench/p2p, 3 Dec): holding 4 and 8 KiB messages still
    // gained 1.4-2x; holding 16 and 32 KiB ones gained nothing one way and
    // lost up to a third both ways.
    static constexpr std::uint64_t max_message = 8 << 10;
    // A few hundred KiB in one sendmsg is as cheap per byte as it gets.
    static constexpr std::uint64_t hold_bytes = 256 << 10;
    // A burst of hold_frames sends at most gap_ns apart could hold its first
    // for 320 us; this bounds it while the caller is still sending.
    static constexpr std::uint64_t max_hold_ns = 200'000;
    // A release of the caller's own later than this is counted as late: a
    // wait or a test comes within a few microseconds of the last send.
    static constexpr std::uint64_t late_ns = 50'000;
    static constexpr std::uint32_t first_backoff = 16;
    static constexpr std::uint32_t max_backoff = 1u << 16;

    explicit send_coalescing(bool enabled) noexcept : enabled_(enabled) {}

    // An eager send of `bytes` at `now`: true when it is to be held, false
    // when it is to be written at once. `release_first` is set when what is
    // held must be written before this send is queued (a hold bound was
    // reached, or the burst ended): the release is counted here already, and
    // held() counts this send alone if it is held, so the caller writes
    // without calling released().
    bool on_send(std::uint64_t now, std::uint64_t bytes, bool& release_first) noexcept;

    // Any other call into the provider: true when frames are held, which
    // the caller then writes, and says when (released). Inline and without
    // a clock: it runs on every poll of a waiting rank.
    bool on_other_call() noexcept
    {
        in_burst_ = false;
        return held_ > 0;
    }
    void released(std::uint64_t now) noexcept { release(now); }

    unsigned held() const noexcept { return held_; }
    // When the oldest send held now was held (meaningful while held() > 0).
    std::uint64_t first_held_ns() const noexcept { return first_held_ns_; }
    // The flusher wrote what was held (engine/held_flusher.hpp): the
    // caller computes after its bursts; back off.
    void flushed() noexcept;
    std::uint64_t flushes() const noexcept { return flushed_; }
    // Statistics.
    std::uint64_t frames_held() const noexcept { return frames_held_; }
    std::uint64_t releases() const noexcept { return releases_; }
    std::uint64_t late_releases() const noexcept { return late_; }
    std::uint32_t backoff() const noexcept { return backoff_; }

private:
    void release(std::uint64_t now) noexcept; // the caller's own

    bool enabled_;
    bool in_burst_ = false; // the last call into the provider was an eager send
    bool skipping_ = false; // this burst is written at once (a backoff)
    std::uint64_t last_send_ns_ = 0;
    std::uint64_t first_held_ns_ = 0;
    std::uint64_t last_held_ns_ = 0;
    unsigned held_ = 0;
    std::uint64_t held_bytes_ = 0;
    std::uint32_t backoff_ = 0; // the backoff the next flush doubles; it never shrinks
    std::uint32_t skip_ = 0; // bursts still to be written at once
    std::uint64_t frames_held_ = 0, releases_ = 0, late_ = 0, flushed_ = 0;
};

} // namespace hashi::fi
