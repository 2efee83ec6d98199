// SPDX-License-Identifier: BSD-3-Clause
// A gateway's WAN wan_link is split over the trunks sending in bulk, not over
// the open ones (relay/relay/trunk_pacing.hpp): a lone sender has the whole
// wan_link, a second one halves it, small writes (pings, credits) take no part,
// and a trunk gives its part back only once it has nothing left to send.
#include "relay/relay/trunk_pacing.hpp"
#include "relay/relay/trunk_tuning.hpp"

#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <map>

using namespace hashi;

namespace {

constexpr std::uint64_t wan_link = 100'000'000 / 8; // 100 Mbit/s
constexpr std::uint64_t ms = 1'000'000;
const std::uint64_t whole = relay::trunk_pacing_rate(wan_link, 1);
const std::uint64_t half = relay::trunk_pacing_rate(wan_link, 2);

// Two trunks' keys (only their addresses count) and descriptors.
int a_key = 0, b_key = 0;
const void* const a = &a_key;
const void* const b = &b_key;
constexpr int a_fd = 7, b_fd = 8;

} // namespace

BOOST_AUTO_TEST_SUITE(relay_trunk_pacing)

BOOST_AUTO_TEST_CASE(a_lone_sending_trunk_has_the_whole_link_and_two_share_it)
{
    relay::trunk_pacing p(wan_link);
    BOOST_TEST(p.rate() == whole); // nothing sending: any trunk that starts may have it all
    BOOST_TEST(p.writing(a, a_fd, 64 << 10, 0));
    BOOST_TEST(p.sending() == 1u);
    BOOST_TEST(p.rate() == whole); // the other trunk is open but idle
    BOOST_TEST(!p.writing(a, a_fd, 64 << 10, 1 * ms)); // already counted: no change
    BOOST_TEST(p.writing(b, b_fd, 64 << 10, 2 * ms));
    BOOST_TEST(p.rate() == half);
}

BOOST_AUTO_TEST_CASE(small_writes_take_no_part)
{
    relay::trunk_pacing p(wan_link);
    BOOST_TEST(p.writing(a, a_fd, 1 << 20, 0));
    // The idle trunk's ping, a credit frame: the busy one keeps the wan_link.
    BOOST_TEST(!p.writing(b, b_fd, 64, 1 * ms));
    BOOST_TEST(!p.writing(b, b_fd, relay::trunk_pacing::bulk_write - 1, 2 * ms));
    BOOST_TEST(p.rate() == whole);
    BOOST_TEST(p.sending() == 1u);
}

BOOST_AUTO_TEST_CASE(a_trunk_keeps_its_part_while_it_has_bytes_to_send)
{
    relay::trunk_pacing p(wan_link);
    std::map<const void*, std::size_t> left {{a, 0}, {b, 0}};
    auto unsent = [&](const void* t, int) { return left[t]; };
    p.writing(a, a_fd, 64 << 10, 0);
    p.writing(b, b_fd, 64 << 10, 0);
    BOOST_TEST(p.rate() == half);
    BOOST_TEST(p.next_expiry() != 0u);
    // Past the estimate, a still has 1 MiB queued: it stays; b is done.
    left[a] = 1 << 20;
    const std::uint64_t later = p.next_expiry() + 60 * ms;
    BOOST_TEST(p.expire(later, unsent));
    BOOST_TEST(p.sending() == 1u);
    BOOST_TEST(p.rate() == whole);
    // Once a has sent it all, nothing is sending.
    left[a] = 0;
    BOOST_TEST(p.expire(p.next_expiry(), unsent));
    BOOST_TEST(p.sending() == 0u);
    BOOST_TEST(p.next_expiry() == 0u);
}

BOOST_AUTO_TEST_CASE(a_closed_trunk_gives_its_part_back)
{
    relay::trunk_pacing p(wan_link);
    p.writing(a, a_fd, 64 << 10, 0);
    p.writing(b, b_fd, 64 << 10, 0);
    BOOST_TEST(p.forget(b, b_fd));
    BOOST_TEST(p.rate() == whole);
    BOOST_TEST(!p.forget(b, b_fd));
}

BOOST_AUTO_TEST_CASE(unpaced_counts_nothing)
{
    relay::trunk_pacing p(0);
    BOOST_TEST(!p.writing(a, a_fd, 1 << 20, 0));
    BOOST_TEST(p.sending() == 0u);
    BOOST_TEST(p.rate() == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
