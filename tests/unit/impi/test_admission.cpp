// SPDX-License-Identifier: BSD-3-Clause
// impi-server's admission policy for connections that have not joined
// (eviction by the newcomer, the per-source limit, the deadline, what
// authentication protects) and the rate-limited log of strangers' events.
#include "relay/server/admission.hpp"
#include "relay/server/log_limit.hpp"

#include <boost/test/unit_test.hpp>

using namespace hashi::impi;
using namespace std::chrono_literals;

namespace {

using Ids = std::vector<Admission::Id>;

Ids ids(const std::vector<Admission::Eviction>& ev)
{
    Ids out;
    for (const auto& e : ev) {
        out.push_back(e.id);
    }
    return out;
}

const auto t0 = Admission::Clock::time_point {} + 1000s;

} // namespace

BOOST_AUTO_TEST_SUITE(impi_admission)

BOOST_AUTO_TEST_CASE(a_full_pool_evicts_the_oldest_of_the_busiest_address_not_the_newcomer)
{
    Admission a({.deadline = 5s, .per_source = 8, .total = 4});
    BOOST_TEST(a.admit(1, "10.0.0.1", t0).empty());
    BOOST_TEST(a.admit(2, "10.0.0.2", t0 + 1ms).empty());
    BOOST_TEST(a.admit(3, "10.0.0.2", t0 + 2ms).empty());
    BOOST_TEST(a.admit(4, "10.0.0.3", t0 + 3ms).empty());
    // Full: the newcomer gets in; 10.0.0.2 holds the most, its oldest goes,
    // although connection 1 is older.
    auto ev = a.admit(5, "10.0.0.4", t0 + 4ms);
    BOOST_TEST((ids(ev) == Ids {2}));
    BOOST_TEST((ev[0].reason == Admission::Reason::full));
    BOOST_TEST(a.unauthenticated() == 4u);
    // Now every address holds one: the oldest overall goes.
    BOOST_TEST((ids(a.admit(6, "10.0.0.5", t0 + 5ms)) == Ids {1}));
}

BOOST_AUTO_TEST_CASE(one_address_only_churns_its_own_slots)
{
    Admission a({.deadline = 5s, .per_source = 3, .total = 64});
    BOOST_TEST(a.admit(100, "192.0.2.7", t0).empty()); // a real client elsewhere
    for (Admission::Id id = 1; id <= 3; ++id) {
        BOOST_TEST(a.admit(id, "203.0.113.9", t0 + std::chrono::milliseconds(id)).empty());
    }
    // The flooding address's fourth evicts its own first, and so on.
    for (Admission::Id id = 4; id <= 50; ++id) {
        auto ev = a.admit(id, "203.0.113.9", t0 + std::chrono::milliseconds(id));
        BOOST_TEST((ids(ev) == Ids {id - 3}));
        BOOST_TEST((ev[0].reason == Admission::Reason::same_source));
    }
    BOOST_TEST(a.unauthenticated_from("203.0.113.9") == 3u);
    BOOST_TEST(a.unauthenticated_from("192.0.2.7") == 1u);
}

BOOST_AUTO_TEST_CASE(many_addresses_cannot_push_out_a_client_while_one_of_them_is_busier)
{
    // 4 slots; the attacker has 3 addresses, one of which must then hold
    // two connections: that one always pays, never the real client.
    Admission a({.deadline = 5s, .per_source = 8, .total = 4});
    BOOST_TEST(a.admit(100, "198.51.100.1", t0).empty()); // the real client, oldest
    Admission::Id id = 1;
    for (int round = 0; round < 30; ++round) {
        for (const char* src : {"10.1.0.1", "10.1.0.2", "10.1.0.3"}) {
            auto ev = a.admit(id, src, t0 + std::chrono::milliseconds(id));
            ++id;
            for (auto gone : ids(ev)) {
                BOOST_TEST(gone != 100u);
            }
        }
    }
    BOOST_TEST(a.unauthenticated_from("198.51.100.1") == 1u);
}

BOOST_AUTO_TEST_CASE(authenticated_connections_are_never_evicted_but_keep_their_deadline)
{
    Admission a({.deadline = 5s, .per_source = 1, .total = 1});
    BOOST_TEST(a.admit(1, "10.0.0.1", t0).empty());
    a.authenticated(1);
    // Same address, full pool: neither rule may take connection 1.
    BOOST_TEST(a.admit(2, "10.0.0.1", t0 + 1ms).empty());
    BOOST_TEST((ids(a.admit(3, "10.0.0.1", t0 + 2ms)) == Ids {2}));
    BOOST_TEST(a.tracked() == 2u);
    // It must still join in time.
    auto late = a.expired(t0 + 5s);
    BOOST_TEST((ids(late) == Ids {1}));
    BOOST_TEST((late[0].reason == Admission::Reason::deadline));
}

BOOST_AUTO_TEST_CASE(the_deadline_closes_idle_connections_and_spares_the_young)
{
    Admission a({.deadline = 2s, .per_source = 8, .total = 64});
    BOOST_TEST(a.admit(1, "10.0.0.1", t0).empty());
    BOOST_TEST(a.admit(2, "10.0.0.2", t0 + 1500ms).empty());
    BOOST_TEST((a.next_deadline() == t0 + 2s));
    BOOST_TEST(a.expired(t0 + 1999ms).empty());
    BOOST_TEST((ids(a.expired(t0 + 2s)) == Ids {1}));
    BOOST_TEST((ids(a.expired(t0 + 3500ms)) == Ids {2}));
    BOOST_TEST(a.tracked() == 0u);
    BOOST_TEST((a.next_deadline() == Admission::Clock::time_point::max()));
}

BOOST_AUTO_TEST_CASE(joined_or_closed_connections_are_forgotten)
{
    Admission a({.deadline = 5s, .per_source = 2, .total = 2});
    BOOST_TEST(a.admit(1, "10.0.0.1", t0).empty());
    BOOST_TEST(a.admit(2, "10.0.0.1", t0).empty());
    a.remove(1);
    a.remove(42); // unknown: nothing happens
    BOOST_TEST(a.admit(3, "10.0.0.1", t0).empty());
    BOOST_TEST(a.unauthenticated() == 2u);
}

BOOST_AUTO_TEST_CASE(zero_limits_still_admit_the_newcomer)
{
    Admission a({.deadline = 5s, .per_source = 0, .total = 0});
    BOOST_TEST(a.admit(1, "10.0.0.1", t0).empty());
    BOOST_TEST((ids(a.admit(2, "10.0.0.2", t0)) == Ids {1}));
    BOOST_TEST(a.unauthenticated() == 1u);
}

BOOST_AUTO_TEST_CASE(the_log_keeps_a_burst_then_one_summary_per_window)
{
    using C = RateLimitedLog::Clock;
    RateLimitedLog log(3, 10s);
    auto t = C::time_point {} + 100s;
    int lines = 0;
    for (int i = 0; i < 10000; ++i) {
        lines += log.allow(i % 2 == 0 ? "malformed" : "evicted", t + std::chrono::microseconds(i)) ? 1 : 0;
    }
    BOOST_TEST(lines == 3);
    BOOST_TEST(!log.summary(t + 9s).has_value());
    auto s = log.summary(t + 10s);
    BOOST_REQUIRE(s.has_value());
    // Nothing lost silently: every left-out event is counted by reason.
    BOOST_TEST(s->find("9997 more connections") != std::string::npos, *s);
    BOOST_TEST(s->find("4999 evicted") != std::string::npos, *s);
    BOOST_TEST(s->find("4998 malformed") != std::string::npos, *s);
    BOOST_TEST(!log.summary(t + 30s).has_value());
    // A new window logs again in full.
    BOOST_TEST(log.allow("malformed", t + 31s));
}

BOOST_AUTO_TEST_CASE(the_log_flushes_what_is_left_at_exit)
{
    RateLimitedLog log(1, 10s);
    auto t = RateLimitedLog::Clock::time_point {} + 100s;
    BOOST_TEST(log.allow("x", t));
    BOOST_TEST(!log.allow("x", t));
    BOOST_TEST(!log.summary(t + 1s).has_value());
    auto s = log.summary(t + 1s, true);
    BOOST_REQUIRE(s.has_value());
    BOOST_TEST(s->find("1 more connections") != std::string::npos, *s);
}

BOOST_AUTO_TEST_SUITE_END()
