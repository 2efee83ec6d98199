// SPDX-License-Identifier: BSD-3-Clause
// The idle policy of a waiting rank (src/transport/engine/idle_wait.hpp),
// driven with the times a real loop would see: its spin follows what it is
// told of the machine (or is fixed); it spins through that,
// gives the core away only to back-to-back polls, naps once a yield showed
// a CPU-bound task on the core, and goes back to yielding when a probe
// yield finds the core free again.
#include "transport/engine/idle_wait.hpp"

#include <boost/test/unit_test.hpp>

using hashi::fi::idle_wait;
using action = idle_wait::action;

namespace {

constexpr std::uint64_t us = 1000;

// A loop of empty polls `step` apart from `t` until the policy asks for
// something other than spinning; returns it, with t advanced.
action poll_until_given_away(idle_wait& w, std::uint64_t& t, std::uint64_t step, int max_polls = 100000)
{
    for (int i = 0; i < max_polls; ++i) {
        t += step;
        if (const action a = w.after_poll(t, false); a != action::spin)
            return a;
    }
    return action::spin;
}

} // namespace

BOOST_AUTO_TEST_SUITE(idle_wait_policy)

BOOST_AUTO_TEST_CASE(spins_for_spin_ns_then_yields)
{
    idle_wait w(50 * us);
    std::uint64_t t = 1'000'000;
    BOOST_TEST((w.after_poll(t, true) == action::spin));
    const std::uint64_t start = t;
    BOOST_TEST((poll_until_given_away(w, t, 1 * us) == action::yield));
    // The first empty poll starts the idle run; 50 us later the yield.
    BOOST_TEST(t - start >= 50 * us);
    BOOST_TEST(t - start <= 52 * us);
    BOOST_TEST(w.yields() == 1u);
}

BOOST_AUTO_TEST_CASE(progress_restarts_the_idle_run)
{
    idle_wait w(50 * us);
    std::uint64_t t = 1'000'000;
    for (int i = 0; i < 1000; ++i) {
        t += 1 * us;
        // Something moves every 40 us: the wait never reaches 50 us.
        BOOST_TEST((w.after_poll(t, i % 40 == 0) == action::spin));
    }
}

BOOST_AUTO_TEST_CASE(polls_far_apart_are_not_a_wait)
{
    // MPI_Test between pieces of computation, or SCASH sleeping between
    // its own polls: nothing is given away however long it goes on.
    idle_wait w(50 * us);
    std::uint64_t t = 1'000'000;
    BOOST_TEST((poll_until_given_away(w, t, idle_wait::gap_ns + 1, 10000) == action::spin));
    BOOST_TEST(w.yields() == 0u);
    BOOST_TEST(w.naps() == 0u);
}

BOOST_AUTO_TEST_CASE(a_long_yield_turns_to_naps_and_a_quick_probe_back)
{
    idle_wait w(50 * us);
    std::uint64_t t = 1'000'000;
    BOOST_REQUIRE((poll_until_given_away(w, t, 1 * us) == action::yield));
    // Free core: the yield came back at once; keep yielding.
    w.gave_away(action::yield, 2 * us);
    t += 2 * us;
    BOOST_TEST(!w.contended());
    BOOST_TEST((poll_until_given_away(w, t, 1 * us) == action::yield));
    // A CPU-bound task took the core for 3 ms.
    w.gave_away(action::yield, 3000 * us);
    t += 3000 * us;
    BOOST_TEST(w.contended());
    // The 3 ms were given away, not a gap in the loop: the wait goes on,
    // with naps, and every probe_every-th action is a probe yield.
    unsigned naps = 0;
    action a = action::spin;
    for (unsigned i = 0; i < idle_wait::probe_every; ++i) {
        a = poll_until_given_away(w, t, 1 * us, 1);
        if (a == action::nap) {
            ++naps;
            w.gave_away(a, 70 * us);
            t += 70 * us;
        }
    }
    BOOST_TEST(naps == idle_wait::probe_every - 1);
    BOOST_TEST((a == action::yield));
    // The probe found the core free: back to yields.
    w.gave_away(action::yield, 3 * us);
    t += 3 * us;
    BOOST_TEST(!w.contended());
    BOOST_TEST((poll_until_given_away(w, t, 1 * us, 1) == action::yield));
}

BOOST_AUTO_TEST_CASE(spin_zero_gives_away_from_the_second_empty_poll)
{
    idle_wait w(0);
    std::uint64_t t = 1'000'000;
    BOOST_TEST((w.after_poll(t, false) == action::spin)); // first poll: starts the idle run
    BOOST_TEST((w.after_poll(t + us, false) == action::yield));
}

BOOST_AUTO_TEST_CASE(more_ranks_than_cpus_spin_short)
{
    idle_wait w;
    BOOST_TEST(w.ranks_seen() == 0u);
    w.sharing(8, 2);
    BOOST_TEST(w.crowded());
    BOOST_TEST(w.spin_ns() == idle_wait::crowded_spin_ns);
    BOOST_TEST(w.ranks_seen() == 8u); // what the statistics file shows
    BOOST_TEST(w.cpus_seen() == 2u);
    std::uint64_t t = 1'000'000;
    w.after_poll(t, true);
    const std::uint64_t start = t;
    BOOST_TEST((poll_until_given_away(w, t, 1 * us) == action::yield));
    BOOST_TEST(t - start >= idle_wait::crowded_spin_ns);
    BOOST_TEST(t - start <= idle_wait::crowded_spin_ns + 2 * us);
    // The ranks fit the CPUs again (some have ended): the longer spin.
    w.sharing(2, 2);
    BOOST_TEST(!w.crowded());
    BOOST_TEST(w.spin_ns() == idle_wait::own_cpu_spin_ns);
    t += 1 * us;
    w.after_poll(t, true); // a message: the next wait starts
    const std::uint64_t again = t;
    BOOST_TEST((poll_until_given_away(w, t, 1 * us) == action::yield));
    BOOST_TEST(t - again >= idle_wait::own_cpu_spin_ns);
}

BOOST_AUTO_TEST_CASE(an_unknown_census_is_a_rank_per_cpu)
{
    idle_wait w;
    w.sharing(0, 0);
    BOOST_TEST(!w.crowded());
    BOOST_TEST(w.spin_ns() == idle_wait::own_cpu_spin_ns);
    w.sharing(3, 0);
    BOOST_TEST(!w.crowded());
}

BOOST_AUTO_TEST_CASE(a_fixed_spin_ignores_what_it_is_told)
{
    idle_wait w(50 * us);
    w.sharing(8, 2);
    BOOST_TEST(w.spin_ns() == 50 * us);
    idle_wait z(0);
    z.sharing(2, 8);
    BOOST_TEST(z.spin_ns() == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
