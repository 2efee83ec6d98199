// SPDX-License-Identifier: BSD-3-Clause
// The read-first policy of a progress round
// (src/transport/engine/read_first.hpp): a path that keeps bringing input is
// read before epoll, epoll is still asked at least every epoll_every rounds
// and whenever writes wait, a path that goes quiet stops being read first,
// and a closed path is never read again.
#include "transport/engine/read_first.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>

using policy = hashi::fi::read_first<int>;

BOOST_AUTO_TEST_SUITE(read_first_policy)

BOOST_AUTO_TEST_CASE(nothing_hot_means_epoll_every_round)
{
    policy p;
    BOOST_TEST(p.hot() == nullptr);
    for (int i = 0; i < 10; ++i)
        BOOST_TEST(!p.skip_epoll(false, false));
    BOOST_TEST(p.skips() == 0u);
}

BOOST_AUTO_TEST_CASE(a_busy_path_skips_epoll_but_not_more_than_epoll_every_rounds)
{
    policy p({.epoll_every = 4, .cool_after = 100});
    int a = 0;
    p.input_on(&a);
    BOOST_TEST(p.hot() == &a);
    // Rounds 1-3 skip, round 4 asks epoll, and so on: never 4 skips in a row.
    int in_a_row = 0, most_in_a_row = 0, polls = 0;
    for (int round = 0; round < 40; ++round) {
        if (p.skip_epoll(true, false)) {
            most_in_a_row = std::max(most_in_a_row, ++in_a_row);
        } else {
            in_a_row = 0;
            ++polls;
        }
    }
    BOOST_TEST(most_in_a_row == 3);
    BOOST_TEST(polls == 10);
    BOOST_TEST(p.hot() == &a);
}

BOOST_AUTO_TEST_CASE(pending_writes_ask_epoll_every_round)
{
    policy p({.epoll_every = 8, .cool_after = 100});
    int a = 0;
    p.input_on(&a);
    for (int round = 0; round < 20; ++round)
        BOOST_TEST(!p.skip_epoll(true, true));
    // Once the writes are through, skipping resumes.
    BOOST_TEST(p.skip_epoll(true, false));
}

BOOST_AUTO_TEST_CASE(a_quiet_path_cools_after_cool_after_rounds)
{
    policy p({.epoll_every = 1000, .cool_after = 5});
    int a = 0;
    p.input_on(&a);
    // Four empty reads keep it hot (and skip epoll); the fifth drops it.
    for (int i = 0; i < 4; ++i)
        BOOST_TEST(p.skip_epoll(false, false));
    BOOST_TEST(!p.skip_epoll(false, false));
    BOOST_TEST(p.hot() == nullptr);
    BOOST_TEST(p.cooled() == 1u);
    // Input in between starts the count again.
    p.input_on(&a);
    for (int i = 0; i < 4; ++i)
        BOOST_TEST(p.skip_epoll(false, false));
    BOOST_TEST(p.skip_epoll(true, false));
    for (int i = 0; i < 4; ++i)
        BOOST_TEST(p.skip_epoll(false, false));
    BOOST_TEST(p.hot() == &a);
}

BOOST_AUTO_TEST_CASE(the_newest_busy_path_wins_and_a_closed_one_is_forgotten)
{
    policy p;
    int a = 0, b = 0;
    p.input_on(&a);
    p.input_on(&b);
    BOOST_TEST(p.hot() == &b);
    p.forget(&a); // not the hot one: no change
    BOOST_TEST(p.hot() == &b);
    p.forget(&b);
    BOOST_TEST(p.hot() == nullptr);
    BOOST_TEST(!p.skip_epoll(true, false));
}

BOOST_AUTO_TEST_SUITE_END()
