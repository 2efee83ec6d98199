// SPDX-License-Identifier: BSD-3-Clause
// The flusher thread and the domain's gate (src/transport/engine/
// held_flusher.hpp, src/transport/domain_gate.hpp), with a real thread: a
// hold is flushed without any further call from the "application", never
// while the application is inside the gate, and a flusher with nothing
// held stays asleep and stops cleanly. The waits below are generous upper
// bounds on a liveness property (the flush happens), not timings.
#include "transport/domain_gate.hpp"
#include "transport/engine/held_flusher.hpp"
#include "transport/engine/log_limiter.hpp"

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <thread>

using hashi::fi::domain_gate;
using hashi::fi::gate_guard;
using hashi::fi::held_flusher;

namespace {

// Polls `done` for up to 10 s.
template <class F> bool eventually(F done)
{
    for (int i = 0; i < 10'000; ++i) {
        if (done())
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return done();
}

} // namespace

BOOST_AUTO_TEST_SUITE(held_flusher_thread)

BOOST_AUTO_TEST_CASE(a_hold_is_flushed_without_another_call)
{
    domain_gate gate;
    std::atomic<int> flushes {0};
    std::atomic<std::uint64_t> held_at {0};
    std::atomic<std::uint64_t> flushed_at {0};
    held_flusher f(gate, [&](std::uint64_t now) -> std::uint64_t {
        // Called only when the hold is bound_ns old.
        if (now - held_at.load() >= held_flusher::bound_ns) {
            flushed_at = now;
            ++flushes;
            return 0;
        }
        return held_at.load();
    });
    {
        const gate_guard in(&gate); // the application's call that holds
        held_at = hashi::fi::monotonic_ns();
        f.note_hold(held_at);
    }
    BOOST_TEST(eventually([&] { return flushes.load() == 1; }));
    BOOST_TEST(flushed_at.load() - held_at.load() >= held_flusher::bound_ns);
    // Nothing more held: no more flushes.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    BOOST_TEST(flushes.load() == 1);
    // A second hold, after the thread went back to sleep, wakes it again.
    {
        const gate_guard in(&gate);
        held_at = hashi::fi::monotonic_ns();
        f.note_hold(held_at);
    }
    BOOST_TEST(eventually([&] { return flushes.load() == 2; }));
}

BOOST_AUTO_TEST_CASE(never_while_the_application_is_inside)
{
    domain_gate gate;
    std::atomic<bool> inside {false};
    std::atomic<bool> overlapped {false};
    std::atomic<int> flushes {0};
    held_flusher f(gate, [&](std::uint64_t) -> std::uint64_t {
        if (inside.load())
            overlapped = true;
        ++flushes;
        return 0;
    });
    {
        const gate_guard in(&gate);
        inside = true;
        f.note_hold(hashi::fi::monotonic_ns());
        // Stay inside for 20 bounds: the flusher must wait.
        std::this_thread::sleep_for(std::chrono::nanoseconds(20 * held_flusher::bound_ns));
        BOOST_TEST(flushes.load() == 0);
        inside = false;
    }
    BOOST_TEST(eventually([&] { return flushes.load() == 1; }));
    BOOST_TEST(!overlapped.load());
}

BOOST_AUTO_TEST_CASE(the_gate_is_reentrant_on_one_thread)
{
    domain_gate gate;
    const gate_guard outer(&gate);
    {
        const gate_guard inner(&gate); // would deadlock if not re-entrant
        BOOST_TEST(!gate.try_flusher());
    }
    // The inner guard's end did not open the gate under the outer one.
    BOOST_TEST(!gate.try_flusher());
}

BOOST_AUTO_TEST_CASE(stops_while_asleep_and_while_holding)
{
    domain_gate gate;
    {
        held_flusher idle(gate, [](std::uint64_t) -> std::uint64_t { return 0; });
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    } // joins a sleeping thread
    {
        held_flusher busy(gate, [](std::uint64_t now) -> std::uint64_t { return now; }); // never done
        busy.note_hold(hashi::fi::monotonic_ns());
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    } // joins a thread that keeps finding something held
    BOOST_TEST(gate.try_flusher()); // and left the gate open
    gate.leave_flusher();
}

BOOST_AUTO_TEST_SUITE_END()
