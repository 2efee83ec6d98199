// SPDX-License-Identifier: BSD-3-Clause
// Liveness: the ping/pong datagram (encoding, every refusal of the decoder,
// the MAC under the job key) and peer_watch, the rules that decide from
// timestamps when to ping a peer and when it is dead.
#include "transport/engine/peer_watch.hpp"
#include "transport/wire/heartbeat.hpp"

#include <boost/test/unit_test.hpp>

using namespace hashi;
using namespace std::chrono_literals;

namespace {

wire::job_key key_of(std::uint8_t seed)
{
    wire::job_key k {};
    for (std::size_t i = 0; i < k.size(); ++i)
        k[i] = static_cast<std::uint8_t>(seed + i);
    return k;
}

wire::heartbeat sample_ping()
{
    wire::heartbeat h;
    h.kind = wire::heartbeat_kind::ping;
    h.sender = 0x1122334455667788ULL;
    h.target = 0x0102030405060708ULL;
    for (std::size_t i = 0; i < h.challenge.size(); ++i)
        h.challenge[i] = static_cast<std::uint8_t>(0xa0 + i);
    return h;
}

std::string reason_of(const std::uint8_t* p, std::size_t n)
{
    auto d = wire::decode_heartbeat(p, n);
    auto* e = std::get_if<wire::decode_error>(&d);
    return e == nullptr ? std::string() : e->reason;
}

using clock = fi::peer_watch::clock;
const clock::time_point t0 = clock::time_point {} + 1000s;
const fi::liveness_timing timing {3000ms, 15000ms};

} // namespace

BOOST_AUTO_TEST_CASE(heartbeat_round_trip_and_mac)
{
    const auto key = key_of(1);
    for (auto kind : {wire::heartbeat_kind::ping, wire::heartbeat_kind::pong}) {
        auto h = sample_ping();
        h.kind = kind;
        const auto b = wire::encode_heartbeat(h, key);
        BOOST_TEST(b.size() == wire::heartbeat_size);
        auto d = wire::decode_heartbeat(b.data(), b.size());
        BOOST_REQUIRE(std::holds_alternative<wire::heartbeat>(d));
        const auto& g = std::get<wire::heartbeat>(d);
        BOOST_TEST((g.kind == kind));
        BOOST_TEST(g.sender == h.sender);
        BOOST_TEST(g.target == h.target);
        BOOST_TEST((g.challenge == h.challenge));
        BOOST_TEST(wire::verify_heartbeat(b.data(), key));
        // Another job's key, or any flipped bit, does not verify.
        BOOST_TEST(!wire::verify_heartbeat(b.data(), key_of(2)));
        for (std::size_t i = 0; i < b.size(); ++i) {
            auto bad = b;
            bad[i] ^= 0x10;
            BOOST_TEST(!wire::verify_heartbeat(bad.data(), key), "byte " << i);
        }
    }
    // A fresh challenge gives a different MAC: a recorded pong answers only
    // the ping it was made for.
    auto h = sample_ping();
    const auto a = wire::encode_heartbeat(h, key);
    h.challenge[0] ^= 1;
    const auto b = wire::encode_heartbeat(h, key);
    BOOST_TEST(!std::equal(a.begin() + wire::heartbeat_mac_offset, a.end(), b.begin() + wire::heartbeat_mac_offset));
}

BOOST_AUTO_TEST_CASE(heartbeat_decoder_refuses_every_bad_field)
{
    const auto good = wire::encode_heartbeat(sample_ping(), key_of(1));
    BOOST_TEST(reason_of(good.data(), good.size()).empty());
    BOOST_TEST(reason_of(good.data(), good.size() - 1).find("71 bytes") != std::string::npos);
    std::uint8_t longer[wire::heartbeat_size + 1] = {};
    std::copy(good.begin(), good.end(), longer);
    BOOST_TEST(reason_of(longer, sizeof longer).find("73 bytes") != std::string::npos);
    BOOST_TEST(reason_of(good.data(), 0).find("0 bytes") != std::string::npos);
    auto bad = good;
    bad[0] = 'X';
    BOOST_TEST(reason_of(bad.data(), bad.size()).find("magic") != std::string::npos);
    bad = good;
    bad[4] = 2;
    BOOST_TEST(reason_of(bad.data(), bad.size()).find("version 2") != std::string::npos);
    for (std::uint8_t kind : {0, 3, 255}) {
        bad = good;
        bad[5] = kind;
        BOOST_TEST(reason_of(bad.data(), bad.size()).find("unknown heartbeat kind") != std::string::npos);
    }
    for (std::size_t i : {6, 7}) {
        bad = good;
        bad[i] = 1;
        BOOST_TEST(reason_of(bad.data(), bad.size()).find("reserved") != std::string::npos);
    }
}

BOOST_AUTO_TEST_CASE(a_peer_nobody_waits_on_is_never_pinged_nor_failed)
{
    fi::peer_watch w(timing);
    BOOST_TEST((w.decide(t0) == fi::peer_watch::action::none));
    BOOST_TEST((w.decide(t0 + 3600s) == fi::peer_watch::action::none));
    // Waited on once, then no longer: silence no longer counts.
    w.set_waiting(true, t0);
    w.set_waiting(false, t0 + 1s);
    BOOST_TEST((w.decide(t0 + 3600s) == fi::peer_watch::action::none));
}

BOOST_AUTO_TEST_CASE(waiting_on_a_silent_peer_pings_then_fails_it_at_the_timeout)
{
    fi::peer_watch w(timing);
    w.set_waiting(true, t0);
    // Never heard from: ping at once, repeat a third of an interval later.
    BOOST_TEST((w.decide(t0) == fi::peer_watch::action::ping));
    w.pinged(t0);
    BOOST_TEST((w.decide(t0 + 500ms) == fi::peer_watch::action::none));
    BOOST_TEST((w.decide(t0 + 1000ms) == fi::peer_watch::action::ping));
    w.pinged(t0 + 1000ms);
    BOOST_TEST((w.decide(t0 + 14999ms) == fi::peer_watch::action::ping));
    // Dead exactly at the timeout after it began waiting, not before.
    BOOST_TEST((w.decide(t0 + 15000ms) == fi::peer_watch::action::dead));
}

BOOST_AUTO_TEST_CASE(answers_keep_a_waited_on_peer_alive_for_ever)
{
    // A peer computing for minutes outside MPI: its liveness thread answers.
    fi::peer_watch w(timing);
    w.set_waiting(true, t0);
    int pings = 0;
    for (auto t = t0; t < t0 + 600s; t += 100ms) {
        const auto a = w.decide(t);
        BOOST_REQUIRE((a != fi::peer_watch::action::dead));
        if (a == fi::peer_watch::action::ping) {
            ++pings;
            w.pinged(t);
            w.heard(t + 20ms); // the pong, one round trip later
        }
    }
    // One ping per interval while answered: 600 s / 3 s.
    BOOST_TEST(pings >= 180); // about one per interval (3 s plus the tick)
    BOOST_TEST(pings <= 205);
}

BOOST_AUTO_TEST_CASE(silence_counts_from_the_later_of_last_heard_and_began_waiting)
{
    fi::peer_watch w(timing);
    w.heard(t0); // data an hour before anyone waited on it
    w.set_waiting(true, t0 + 3600s);
    BOOST_TEST((w.decide(t0 + 3600s) == fi::peer_watch::action::ping));
    BOOST_TEST((w.decide(t0 + 3614s) != fi::peer_watch::action::dead));
    BOOST_TEST((w.decide(t0 + 3615s) == fi::peer_watch::action::dead));
    // Heard while waiting: the clock restarts from there.
    fi::peer_watch v(timing);
    v.set_waiting(true, t0);
    v.heard(t0 + 10s);
    BOOST_TEST((v.decide(t0 + 12s) == fi::peer_watch::action::none)); // heard 2 s ago: no ping yet
    BOOST_TEST((v.decide(t0 + 13s) == fi::peer_watch::action::ping));
    BOOST_TEST((v.decide(t0 + 24999ms) != fi::peer_watch::action::dead));
    BOOST_TEST((v.decide(t0 + 25s) == fi::peer_watch::action::dead));
    // Waiting again after a pause restarts the count too.
    v.set_waiting(false, t0 + 20s);
    v.set_waiting(true, t0 + 100s);
    BOOST_TEST((v.decide(t0 + 114s) != fi::peer_watch::action::dead));
    BOOST_TEST((v.decide(t0 + 115s) == fi::peer_watch::action::dead));
}

BOOST_AUTO_TEST_CASE(a_zero_timeout_never_fails_a_peer)
{
    fi::peer_watch w(fi::liveness_timing {3000ms, 0ms});
    w.set_waiting(true, t0);
    BOOST_TEST((w.decide(t0 + 86400s) != fi::peer_watch::action::dead));
}
