// SPDX-License-Identifier: BSD-3-Clause
// The WAN share split over the sockets sending (send/sending_sockets.hpp).
#include "transport/send/sending_sockets.hpp"

#include <boost/test/unit_test.hpp>

using hashi::fi::sending_sockets;

namespace {

constexpr std::uint64_t ms = 1'000'000;
constexpr std::uint64_t rate = 1'000'000; // bytes/s: 1000 bytes per ms
int owners[4];

sending_sockets::key sock(int i)
{
    return {&owners[i], 10 + i};
}

} // namespace

BOOST_AUTO_TEST_SUITE(sending_sockets_split)

BOOST_AUTO_TEST_CASE(four_sockets_sending_at_once_share_one_rate)
{
    sending_sockets s;
    BOOST_TEST(s.each(rate) == rate); // none sending: a first socket gets it all
    for (int i = 0; i < 4; ++i)
        BOOST_TEST(s.sent(sock(i), 100'000, 0, rate)); // each one added changes the split
    BOOST_TEST(s.count() == 4u);
    BOOST_TEST(s.each(rate) == rate / 4);
    // The same socket writing again changes nothing for the others.
    BOOST_TEST(!s.sent(sock(0), 1000, 1 * ms, rate));
    BOOST_TEST(s.count() == 4u);
}

BOOST_AUTO_TEST_CASE(a_socket_counts_until_its_bytes_have_left_at_its_part)
{
    sending_sockets s;
    s.sent(sock(0), 10'000, 0, rate); // alone: 10 ms at the whole rate
    s.sent(sock(1), 10'000, 0, rate); // second: 20 ms at half
    BOOST_TEST(s.next_expiry() == 10 * ms);
    BOOST_TEST(!s.expire(10 * ms - 1));
    BOOST_TEST(s.expire(10 * ms));
    BOOST_TEST(s.count() == 1u);
    BOOST_TEST(s.each(rate) == rate); // the one left gets it all again
    BOOST_TEST(s.expire(20 * ms));
    BOOST_TEST(s.count() == 0u);
    BOOST_TEST(s.next_expiry() == 0u);
}

BOOST_AUTO_TEST_CASE(writes_queue_behind_what_the_socket_still_has_to_send)
{
    sending_sockets s;
    s.sent(sock(0), 5000, 0, rate); // until 5 ms
    s.sent(sock(0), 5000, 2 * ms, rate); // after the first: until 10 ms
    BOOST_TEST(s.next_expiry() == 10 * ms);
    // A write after it drained starts from its time.
    s.sent(sock(0), 5000, 30 * ms, rate);
    BOOST_TEST(s.next_expiry() == 35 * ms);
}

BOOST_AUTO_TEST_CASE(a_small_write_still_counts_for_the_minimum_hold)
{
    sending_sockets s;
    s.sent(sock(2), 1, 7 * ms, rate);
    BOOST_TEST(s.next_expiry() == 7 * ms + sending_sockets::min_hold_ns);
}

BOOST_AUTO_TEST_CASE(a_forgotten_socket_stops_counting_at_once)
{
    sending_sockets s;
    s.sent(sock(0), 100'000, 0, rate);
    s.sent(sock(1), 100'000, 0, rate);
    BOOST_TEST(!s.forget(sock(3)));
    BOOST_TEST(s.forget(sock(1)));
    BOOST_TEST(s.count() == 1u);
    // Same descriptor, other peer: another socket.
    BOOST_TEST(s.sent({&owners[3], 10}, 10, 0, rate));
    BOOST_TEST(s.count() == 2u);
}

BOOST_AUTO_TEST_CASE(a_long_write_is_looked_at_again_after_the_maximum_hold)
{
    // 1 MB at 1 MB/s would count for a second on the estimate alone; the
    // kernel is asked after 50 ms, and a socket it has drained stops.
    sending_sockets s;
    s.sent(sock(0), 1'000'000, 0, rate);
    s.sent(sock(1), 1'000'000, 0, rate);
    BOOST_TEST(s.next_expiry() == sending_sockets::max_hold_ns);
    auto unsent = [](const sending_sockets::key& k) -> std::size_t { return k == sock(0) ? 500'000 : 0; };
    BOOST_TEST(s.expire(sending_sockets::max_hold_ns, rate, unsent));
    BOOST_TEST(s.count() == 1u);
    BOOST_TEST(s.next_expiry() == 2 * sending_sockets::max_hold_ns);
}

BOOST_AUTO_TEST_CASE(a_huge_write_at_a_tiny_rate_does_not_overflow)
{
    sending_sockets s;
    s.sent(sock(0), ~std::size_t {0} / 2, 0, 1);
    BOOST_TEST(s.next_expiry() == sending_sockets::max_hold_ns);
    BOOST_TEST(s.count() == 1u);
}

BOOST_AUTO_TEST_CASE(a_socket_the_kernel_still_holds_bytes_for_keeps_its_part)
{
    // Its estimate ran out, but its window or pacing kept it slower: while
    // it still sends, the others must not take its part.
    sending_sockets s;
    s.sent(sock(0), 10'000, 0, rate);
    s.sent(sock(1), 100'000, 0, rate);
    std::size_t asked = 0;
    auto unsent = [&](const sending_sockets::key& k) -> std::size_t {
        ++asked;
        return k == sock(0) ? 3000 : 0;
    };
    BOOST_TEST(!s.expire(10 * ms, rate, unsent));
    BOOST_TEST(asked == 1u); // only the one past its estimate is asked about
    BOOST_TEST(s.count() == 2u);
    BOOST_TEST(s.next_expiry() == 16 * ms); // 3000 bytes at half the rate
    // Once the kernel has sent it all, it stops counting.
    BOOST_TEST(s.expire(16 * ms, rate, [](const sending_sockets::key&) -> std::size_t { return 0; }));
    BOOST_TEST(s.count() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()
