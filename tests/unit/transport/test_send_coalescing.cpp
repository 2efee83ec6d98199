// SPDX-License-Identifier: BSD-3-Clause
// Send coalescing's policy (src/transport/engine/send_coalescing.hpp),
// driven with the times a real caller would produce: a message-rate loop
// (a window of sends, then a wait), a ping-pong, a burst that exceeds the
// hold bounds, and a manager that sends to its workers and then computes,
// whose held sends the flusher has to write, and which must then stop
// being held.
#include "transport/engine/send_coalescing.hpp"

#include <boost/test/unit_test.hpp>

using hashi::fi::send_coalescing;

namespace {

constexpr std::uint64_t us = 1000;

struct caller {
    send_coalescing policy;
    std::uint64_t t = 1'000'000'000;
    unsigned written_at_once = 0, held = 0, releases_before = 0;

    explicit caller(bool enabled = true) : policy(enabled) {}

    // `n` eager sends of `bytes` each, `step` apart.
    void sends(unsigned n, std::uint64_t step = 1 * us, std::uint64_t bytes = 8)
    {
        for (unsigned i = 0; i < n; ++i) {
            t += step;
            bool release_first = false;
            if (policy.on_send(t, bytes, release_first))
                ++held;
            else
                ++written_at_once;
            if (release_first)
                ++releases_before;
        }
    }
    // A wait or a test `after` the last send: true when it wrote what was held.
    bool other_call(std::uint64_t after = 1 * us)
    {
        t += after;
        if (!policy.on_other_call())
            return false;
        policy.released(t);
        return true;
    }
    // The caller computes; the flusher writes what is held (the engine
    // calls it only when something is).
    bool flusher(std::uint64_t after = 1000 * us)
    {
        t += after;
        if (policy.held() == 0)
            return false;
        policy.flushed();
        return true;
    }
};

} // namespace

BOOST_AUTO_TEST_SUITE(send_coalescing_policy)

BOOST_AUTO_TEST_CASE(a_window_then_a_wait_is_written_in_two_calls)
{
    caller c;
    c.sends(64);
    // The first send goes at once, the other 63 wait for the wait.
    BOOST_TEST(c.written_at_once == 1u);
    BOOST_TEST(c.held == 63u);
    BOOST_TEST(c.policy.held() == 63u);
    BOOST_TEST(c.other_call());
    BOOST_TEST(c.policy.held() == 0u);
    BOOST_TEST(c.policy.late_releases() == 0u);
    // The next window coalesces just the same.
    c.sends(64);
    BOOST_TEST(c.held == 126u);
    BOOST_TEST(c.other_call());
    BOOST_TEST(c.policy.releases() == 2u);
}

BOOST_AUTO_TEST_CASE(isolated_sends_are_never_held)
{
    // A ping-pong: a send, then a receive and a wait, then the next send.
    caller c;
    for (int i = 0; i < 1000; ++i) {
        c.sends(1);
        BOOST_TEST(!c.other_call());
    }
    BOOST_TEST(c.held == 0u);
    // Sends further apart than gap_ns with nothing between them: each is a
    // burst of its own.
    c.sends(100, send_coalescing::gap_ns + 1);
    BOOST_TEST(c.held == 0u);
}

BOOST_AUTO_TEST_CASE(the_hold_bound_writes_a_long_burst_as_it_goes)
{
    caller c;
    c.sends(1000);
    // Never more than hold_frames held; each time the bound is reached,
    // what is held is written before the next send is queued.
    BOOST_TEST(c.policy.held() <= send_coalescing::hold_frames);
    BOOST_TEST(c.releases_before >= 999u / send_coalescing::hold_frames - 1);
    BOOST_TEST(c.policy.late_releases() == 0u);
    BOOST_TEST(c.other_call());
}

BOOST_AUTO_TEST_CASE(held_bytes_are_bounded)
{
    // 8 KiB messages: at most hold_bytes of them held at a time.
    constexpr unsigned size = send_coalescing::max_message;
    caller c;
    c.sends(60, 1 * us, size);
    BOOST_TEST(c.policy.held() * size <= send_coalescing::hold_bytes);
    BOOST_TEST(c.releases_before >= 59u * size / send_coalescing::hold_bytes);
    BOOST_TEST(c.held == 59u);
    BOOST_TEST(c.policy.late_releases() == 0u);
    // A larger message is never held, and what is held goes before it.
    const unsigned releases = c.releases_before;
    c.sends(1, 1 * us, size + 1);
    BOOST_TEST(c.held == 59u);
    BOOST_TEST(c.releases_before == releases + 1);
    BOOST_TEST(c.policy.held() == 0u);
    // Nor is one that follows it.
    c.sends(1, 1 * us, size + 1);
    BOOST_TEST(c.held == 59u);
}

BOOST_AUTO_TEST_CASE(no_held_frame_waits_longer_than_max_hold_ns_inside_a_burst)
{
    // Sends 4 us apart (just under gap_ns): the oldest held one is written
    // once it is older than max_hold_ns (after 50 sends), before the
    // 64-frame bound.
    caller c;
    c.sends(60, 4 * us);
    BOOST_TEST(c.releases_before == 1u);
    BOOST_TEST(c.policy.held() < 60u - send_coalescing::max_hold_ns / (4 * us));
    BOOST_TEST(c.policy.late_releases() == 0u);
}

BOOST_AUTO_TEST_CASE(a_manager_that_computes_after_its_sends_stops_being_held)
{
    caller c;
    c.sends(8); // to 8 workers
    BOOST_TEST(c.held == 7u);
    // Then its own share of the work: the flusher writes the 7.
    BOOST_TEST(c.flusher());
    BOOST_TEST(c.policy.flushes() == 1u);
    BOOST_TEST(c.policy.backoff() == send_coalescing::first_backoff);
    // The next first_backoff bursts go out at once, every send of them.
    for (std::uint32_t i = 0; i < send_coalescing::first_backoff; ++i) {
        c.sends(8);
        BOOST_TEST(!c.flusher());
        BOOST_TEST(!c.other_call(10'000 * us));
    }
    BOOST_TEST(c.held == 7u);
    // Then it tries again; the flusher has to write again, the backoff doubles.
    c.sends(8);
    BOOST_TEST(c.held == 14u);
    BOOST_TEST(c.flusher());
    BOOST_TEST(c.policy.backoff() == 2 * send_coalescing::first_backoff);
    // Releases of the caller's own, in time, do not shrink it: a root of
    // small broadcasts that also waits for windows would pay the bound
    // again after each.
    for (std::uint32_t i = 0; i < 2 * send_coalescing::first_backoff; ++i) {
        c.sends(8);
        c.other_call();
    }
    c.sends(8);
    BOOST_TEST(c.other_call());
    BOOST_TEST(c.policy.backoff() == 2 * send_coalescing::first_backoff);
    BOOST_TEST(c.held == 21u);
}

BOOST_AUTO_TEST_CASE(a_late_release_of_the_callers_own_is_only_counted)
{
    // Preempted between its sends and its wait (an oversubscribed node):
    // late, but no reason to stop holding.
    caller c;
    c.sends(8);
    BOOST_TEST(c.other_call(500 * us));
    BOOST_TEST(c.policy.late_releases() == 1u);
    BOOST_TEST(c.policy.backoff() == 0u);
    c.sends(8);
    BOOST_TEST(c.held == 14u);
}

BOOST_AUTO_TEST_CASE(the_backoff_is_bounded)
{
    caller c;
    for (int round = 0; round < 40; ++round) {
        c.sends(2);
        c.flusher();
        // Spend the backoff without holding anything.
        for (std::uint32_t i = 0; i < c.policy.backoff(); ++i) {
            c.sends(1);
            c.other_call();
        }
    }
    BOOST_TEST(c.policy.backoff() == send_coalescing::max_backoff);
}

BOOST_AUTO_TEST_CASE(a_gap_inside_a_burst_writes_what_is_held_first)
{
    caller c;
    c.sends(4);
    BOOST_TEST(c.policy.held() == 3u);
    // The next send comes after computation but with no call between.
    c.sends(1, 20 * us);
    BOOST_TEST(c.releases_before == 1u);
    BOOST_TEST(c.policy.held() == 0u); // itself starts a new burst, written at once
    BOOST_TEST(c.written_at_once == 2u);
}

BOOST_AUTO_TEST_CASE(disabled_holds_nothing)
{
    caller c(false);
    c.sends(64);
    BOOST_TEST(c.held == 0u);
    BOOST_TEST(!c.other_call());
}

BOOST_AUTO_TEST_SUITE_END()
