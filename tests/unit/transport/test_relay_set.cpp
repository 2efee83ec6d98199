// SPDX-License-Identifier: BSD-3-Clause
// The local relay set (HASHI_RELAYS, engine/relay_set.hpp) and the router's
// choice of a route and a trunk (engine/router.hpp): every malformed entry
// refused with a message naming it; both sides of a pair pick the same
// trunk; pairs spread over the trunks; direct routes where no relay is
// involved.
#include "transport/address.hpp"
#include "transport/engine/relay_set.hpp"
#include "transport/engine/router.hpp"

#include <boost/test/unit_test.hpp>

#include <random>
#include <string>
#include <vector>

using namespace hashi;

namespace {

bool refused(const char* text, const std::vector<std::string>& words)
{
    std::string error;
    const auto r = fi::parse_relays(text, error);
    if (r)
        return false;
    for (const auto& w : words)
        if (error.find(w) == std::string::npos) {
            BOOST_TEST_MESSAGE("'" << text << "': message without '" << w << "': " << error);
            return false;
        }
    return true;
}

fi::endpoint_address card(std::uint16_t cluster, std::uint64_t nonce, bool via_relay)
{
    fi::endpoint_address a;
    a.cluster_id = cluster;
    a.ipv4 = 0xc0a80000u + cluster * 256 + static_cast<std::uint32_t>(nonce % 200) + 1;
    a.port = static_cast<std::uint16_t>(40000 + nonce % 1000);
    a.nonce = nonce;
    a.via_relay = via_relay;
    return a;
}

std::vector<fi::relay_endpoint> relays(std::uint32_t base, std::size_t n)
{
    std::vector<fi::relay_endpoint> r;
    for (std::size_t i = 0; i < n; ++i)
        r.push_back({base + static_cast<std::uint32_t>(i), static_cast<std::uint16_t>(7000 + i)});
    return r;
}

} // namespace

BOOST_AUTO_TEST_CASE(relays_parse_in_order)
{
    std::string error;
    auto one = fi::parse_relays("10.0.0.1:7000", error);
    BOOST_REQUIRE(one);
    BOOST_REQUIRE(one->size() == 1u);
    BOOST_TEST((*one)[0].ipv4 == 0x0a000001u);
    BOOST_TEST((*one)[0].port == 7000);
    BOOST_TEST((*one)[0].describe() == "10.0.0.1:7000");
    auto eight = fi::parse_relays(
        "10.0.0.1:1,10.0.0.2:2,10.0.0.3:3,10.0.0.4:4,10.0.0.5:5,10.0.0.6:6,10.0.0.7:7,192.168.255.254:65535", error);
    BOOST_REQUIRE(eight);
    BOOST_REQUIRE(eight->size() == 8u);
    BOOST_TEST((*eight)[7].ipv4 == 0xc0a8fffeu);
    BOOST_TEST((*eight)[7].port == 65535);
    BOOST_TEST((*eight)[2].describe() == "10.0.0.3:3");
    // Same host, two ports: two relays.
    BOOST_TEST(fi::parse_relays("10.0.0.1:7000,10.0.0.1:7001", error)->size() == 2u);
    // Nothing: no relays (the ranks of a cluster with public addresses).
    auto none = fi::parse_relays("", error);
    BOOST_REQUIRE(none);
    BOOST_TEST(none->empty());
}

BOOST_AUTO_TEST_CASE(each_kind_of_bad_relay_entry_is_named)
{
    BOOST_TEST(refused("10.0.0.1", {"HASHI_RELAYS='10.0.0.1'", "entry 1 ('10.0.0.1')", "no ':PORT'"}));
    BOOST_TEST(refused("10.0.0.1:7000,", {"entry 2 ('')", "empty"}));
    BOOST_TEST(refused(",10.0.0.1:7000", {"entry 1 ('')", "empty"}));
    BOOST_TEST(refused("10.0.0.1:7000,,10.0.0.2:7000", {"entry 2", "empty"}));
    BOOST_TEST(refused("gw0:7000", {"entry 1 ('gw0:7000')", "'gw0' is not an IPv4 address", "no host names"}));
    BOOST_TEST(refused("10.0.0.1:7000,10.0.0.256:7000", {"entry 2", "'10.0.0.256' is not an IPv4"}));
    BOOST_TEST(refused("10.0.1:7000", {"not an IPv4"}));
    BOOST_TEST(refused(" 10.0.0.1:7000", {"not an IPv4"}));
    BOOST_TEST(refused(":7000", {"'' is not an IPv4"}));
    BOOST_TEST(refused("0.0.0.0:7000", {"not the address of one host"}));
    BOOST_TEST(refused("255.255.255.255:7000", {"not the address of one host"}));
    BOOST_TEST(refused("224.0.0.1:7000", {"multicast"}));
    BOOST_TEST(refused("10.0.0.1:", {"entry 1", "port", "from 1 to 65535"}));
    BOOST_TEST(refused("10.0.0.1:0", {"port '0'", "from 1 to 65535"}));
    BOOST_TEST(refused("10.0.0.1:65536", {"port '65536'"}));
    BOOST_TEST(refused("10.0.0.1:70x", {"port '70x'"}));
    BOOST_TEST(refused("10.0.0.1:-1", {"port '-1'"}));
    BOOST_TEST(refused("10.0.0.1:7000:1", {"port '7000:1'"}));
    BOOST_TEST(refused("10.0.0.1:7000;10.0.0.2:7000", {"port '7000;10.0.0.2"}));
    BOOST_TEST(refused("10.0.0.1:7000,10.0.0.1:7000", {"entry 2", "same relay as entry 1"}));
    BOOST_TEST(refused("10.0.0.1:1,10.0.0.1:2,10.0.0.1:3,10.0.0.1:4,10.0.0.1:5,10.0.0.1:6,10.0.0.1:7,10.0.0.1:8,"
                       "10.0.0.1:9",
        {"more than 8 relays"}));
    // Every message says what the variable is and who sets it.
    BOOST_TEST(refused("x", {"set by Hashi's mpiexec", "A.B.C.D:PORT"}));
}

BOOST_AUTO_TEST_CASE(direct_when_no_relay_is_involved)
{
    const auto a = card(0, 1, false);
    const auto b = card(1, 2, false);
    const fi::router from_a(a, relays(0x0a000001u, 2));
    const auto r = from_a.route_to(b);
    BOOST_TEST((r.how == fi::route::kind::direct));
    BOOST_TEST(r.ipv4 == b.ipv4);
    BOOST_TEST(r.port == b.port);
    BOOST_TEST(r.wan);
    BOOST_TEST(from_a.sends_into_wan(b)); // the process's own socket is on the WAN: paced
    BOOST_TEST(from_a.note(b).empty());
    // Same cluster, both behind relays: direct, inside the cluster.
    const auto c = card(3, 3, true);
    const auto d = card(3, 4, true);
    const fi::router from_c(c, relays(0x0a000001u, 2));
    const auto rc = from_c.route_to(d);
    BOOST_TEST((rc.how == fi::route::kind::direct));
    BOOST_TEST(rc.ipv4 == d.ipv4);
    BOOST_TEST(!rc.wan);
    BOOST_TEST(!from_c.sends_into_wan(d));
}

BOOST_AUTO_TEST_CASE(relayed_when_either_side_is_behind_relays)
{
    const auto local = relays(0x0a0000f0u, 3);
    for (auto [self_relayed, peer_relayed] : {std::pair {true, true}, {true, false}, {false, true}}) {
        const auto a = card(0, 11, self_relayed);
        const auto b = card(1, 12, peer_relayed);
        const fi::router from_a(a, local);
        const auto r = from_a.route_to(b);
        BOOST_TEST((r.how == fi::route::kind::relay));
        BOOST_TEST(r.wan); // protection still applies end to end
        // Pacing does not: the bytes enter the WAN from the relays' trunk,
        // which its relay paces; this socket ends at a relay on the LAN.
        BOOST_TEST(!from_a.sends_into_wan(b));
        BOOST_REQUIRE(r.trunk < local.size());
        BOOST_TEST(r.ipv4 == local[r.trunk].ipv4);
        BOOST_TEST(r.port == local[r.trunk].port);
        BOOST_TEST(from_a.note(b) ==
            "via relay " + std::to_string(r.trunk) + " of cluster 0 (" + local[r.trunk].describe() +
                ") and its trunk to relay " + std::to_string(r.trunk) + " of cluster 1");
    }
    // The peer is behind relays and this process has none.
    const auto a = card(0, 21, false);
    const auto b = card(1, 22, true);
    const fi::router bare(a);
    BOOST_TEST((bare.route_to(b).how == fi::route::kind::unreachable));
    const auto why = fi::router::unreachable_reason(b);
    BOOST_TEST(why.find("HASHI_RELAYS") != std::string::npos);
    BOOST_TEST(why.find("mpiexec") != std::string::npos);
    BOOST_TEST(why.find("impi-relay") != std::string::npos);
    BOOST_TEST(why.find("cluster 1") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(both_sides_pick_the_same_trunk)
{
    std::mt19937_64 rng(13);
    for (std::size_t trunks = 1; trunks <= fi::max_relays; ++trunks) {
        for (int i = 0; i < 200; ++i) {
            const auto a = card(0, rng(), true);
            const auto b = card(1, rng(), true);
            // Each cluster has its own relays, the same number of them.
            const fi::router from_a(a, relays(0x0a000001u, trunks));
            const fi::router from_b(b, relays(0x0a010001u, trunks));
            const auto ra = from_a.route_to(b);
            const auto rb = from_b.route_to(a);
            BOOST_REQUIRE((ra.how == fi::route::kind::relay && rb.how == fi::route::kind::relay));
            BOOST_TEST(ra.trunk == rb.trunk);
            BOOST_TEST(fi::router::trunk_of(a.encode(), b.encode(), trunks) ==
                fi::router::trunk_of(b.encode(), a.encode(), trunks));
        }
    }
}

BOOST_AUTO_TEST_CASE(pairs_spread_over_the_trunks)
{
    std::mt19937_64 rng(42);
    for (std::size_t trunks : {2u, 3u, 4u, 8u}) {
        std::vector<int> count(trunks, 0);
        const int pairs = 4000;
        for (int i = 0; i < pairs; ++i)
            ++count[fi::router::trunk_of(card(0, rng(), true).encode(), card(1, rng(), true).encode(), trunks)];
        // Each trunk gets its share give or take a third (binomial spread
        // is far below that at 4000 pairs).
        const double share = static_cast<double>(pairs) / static_cast<double>(trunks);
        for (std::size_t t = 0; t < trunks; ++t)
            BOOST_TEST((count[t] > share * 2 / 3 && count[t] < share * 4 / 3), "trunk " << t << " of " << trunks
                                                                                      << ": " << count[t]);
    }
    // The ranks of one node (same address, consecutive ports, random
    // nonces) talking to one peer spread too.
    std::vector<int> count(4, 0);
    const auto peer = card(1, 99, true).encode();
    for (int i = 0; i < 400; ++i) {
        auto a = card(0, rng(), true);
        a.ipv4 = 0x0a000005u;
        a.port = static_cast<std::uint16_t>(40000 + i);
        ++count[fi::router::trunk_of(a.encode(), peer, 4)];
    }
    for (int c : count)
        BOOST_TEST(c > 50);
    BOOST_TEST(fi::router::trunk_of(peer, peer, 1) == 0u);
}
