// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of the home directory: initial distributions and the
// migration rule with its hysteresis (src/scash/home.cpp).
#include "scash/home.hpp"
#include "scash/scash.h"

#include <boost/test/unit_test.hpp>

using hashi::scash::HomeDirectory;
using hashi::scash::MigrationPolicy;

BOOST_AUTO_TEST_CASE(initial_distributions)
{
    HomeDirectory block(10, SCASH_BLOCK, 4), cyclic(10, SCASH_CYCLIC, 4);
    const int block_homes[] = {0, 0, 0, 1, 1, 1, 2, 2, 2, 3};
    for (int i = 0; i < 10; ++i) {
        BOOST_TEST(block.home(i) == block_homes[i]);
        BOOST_TEST(cyclic.home(i) == i % 4);
    }
}

BOOST_AUTO_TEST_CASE(first_move_is_immediate_later_moves_wait)
{
    HomeDirectory d(1, SCASH_CYCLIC, 4); // page 0 at process 0
    const MigrationPolicy h2 {true, 2};
    BOOST_TEST(d.decide(0, 3, h2) == 3); // the initial home was a guess: moves at once
    BOOST_TEST(d.decide(0, 3, h2) == 3); // the home writing itself: stays
    BOOST_TEST(d.decide(0, 1, h2) == 3); // a new single writer: streak 1
    BOOST_TEST(d.decide(0, 1, h2) == 1); // streak 2: moves
}

BOOST_AUTO_TEST_CASE(single_writer_moves_after_hysteresis)
{
    HomeDirectory d(1, SCASH_CYCLIC, 4);
    const MigrationPolicy h2 {true, 2, false}; // SCASH_FIRST_MOVE=0
    BOOST_TEST(d.decide(0, 3, h2) == 0); // first interval: streak 1
    BOOST_TEST(d.decide(0, 3, h2) == 3); // second: moves
    BOOST_TEST(d.decide(0, 3, h2) == 3); // the home writing itself: stays
}

BOOST_AUTO_TEST_CASE(placed_pages_wait_for_the_hysteresis)
{
    HomeDirectory d(4, SCASH_BLOCK, 4);
    d.place(2, 1);
    BOOST_TEST(d.home(2) == 1);
    const MigrationPolicy h2 {true, 2};
    BOOST_TEST(d.decide(2, 3, h2) == 1);
    BOOST_TEST(d.decide(2, 3, h2) == 3);
    BOOST_TEST(d.decide(3, 2, h2) == 2); // an unplaced page moves at once
}

BOOST_AUTO_TEST_CASE(alternating_or_several_writers_do_not_move)
{
    HomeDirectory d(1, SCASH_CYCLIC, 4);
    const MigrationPolicy h2 {true, 2};
    BOOST_TEST(d.decide(0, 1, h2) == 1); // first move
    for (int round = 0; round < 6; ++round)
        BOOST_TEST(d.decide(0, 2 + round % 2, h2) == 1);
    // The last round's writer was 3 (streak 1); several writers break it.
    BOOST_TEST(d.decide(0, -1, h2) == 1);
    BOOST_TEST(d.decide(0, 3, h2) == 1);
    BOOST_TEST(d.decide(0, 3, h2) == 3);
}

BOOST_AUTO_TEST_CASE(several_first_writers_keep_the_initial_home)
{
    HomeDirectory d(1, SCASH_CYCLIC, 4);
    const MigrationPolicy h2 {true, 2};
    BOOST_TEST(d.decide(0, -1, h2) == 0);
    BOOST_TEST(d.decide(0, 2, h2) == 2); // still the initial home: moves at once
}

BOOST_AUTO_TEST_CASE(static_homes_never_move)
{
    HomeDirectory d(1, SCASH_BLOCK, 4);
    const MigrationPolicy off {false, 1};
    for (int round = 0; round < 4; ++round)
        BOOST_TEST(d.decide(0, 2, off) == 0);
}

BOOST_AUTO_TEST_CASE(first_touch_places_once_even_when_static)
{
    HomeDirectory d(8, SCASH_FIRST_TOUCH, 4);
    const MigrationPolicy off {false, 1};
    BOOST_TEST(d.decide(5, 3, off) == 3); // first written interval places it
    BOOST_TEST(d.decide(5, 1, off) == 3); // then static
    BOOST_TEST(d.decide(6, -1, off) == d.home(6)); // several first writers: provisional home stays
    BOOST_TEST(d.home(6) == 3);
}
