// SPDX-License-Identifier: BSD-3-Clause
// The relay route messages (wire/relay_route.hpp): every message and the
// liveness envelope encoded and decoded byte for byte as the relay daemon
// decodes them, every way decoding refuses input, and the route MACs
// (engine/job_key.hpp): bound to the key, to every field, and to the side.
#include "transport/address.hpp"
#include "transport/engine/job_key.hpp"
#include "transport/wire/heartbeat.hpp"
#include "transport/wire/relay_route.hpp"

#include <boost/test/unit_test.hpp>

#include <cstring>
#include <string>

using namespace hashi;

namespace {

fi::endpoint_address card(std::uint16_t cluster, std::uint16_t port)
{
    fi::endpoint_address a;
    a.cluster_id = cluster;
    a.ipv4 = 0x0a000002u + cluster;
    a.port = port;
    a.nonce = 0x1122334455667788ULL + port;
    a.via_relay = true;
    a.relay_ipv4 = 0x0a0000feu;
    a.relay_port = 7000;
    return a;
}

template <class V> const wire::decode_error* error_of(const V& v)
{
    return std::get_if<wire::decode_error>(&v);
}

template <class V> bool says(const V& v, const char* word)
{
    const auto* e = error_of(v);
    return e != nullptr && e->reason.find(word) != std::string::npos;
}

wire::route_request sample_request()
{
    wire::route_request r;
    r.job_id = 0x0102030405060708ULL;
    r.from = card(0, 40001).encode();
    r.to = card(1, 40002).encode();
    for (std::size_t i = 0; i < r.connector_nonce.size(); ++i)
        r.connector_nonce[i] = static_cast<std::uint8_t>(0xa0 + i);
    return r;
}

fi::relay_route_transcript sample_transcript()
{
    const auto r = sample_request();
    fi::relay_route_transcript t;
    t.job_id = r.job_id;
    t.from = r.from;
    t.to = r.to;
    t.connector_nonce = r.connector_nonce;
    t.relay_nonce = fi::fresh_nonce();
    return t;
}

fi::job_key key(char digit)
{
    return *fi::job_key::from_hex(std::string(64, digit));
}

} // namespace

BOOST_AUTO_TEST_CASE(route_request_is_the_documented_96_bytes)
{
    const auto r = sample_request();
    const auto b = wire::encode(r);
    BOOST_TEST(b.size() == 96u);
    BOOST_TEST(std::memcmp(b.data(), "HRRQ", 4) == 0);
    BOOST_TEST(b[4] == 1);
    BOOST_TEST((b[5] == 0 && b[6] == 0 && b[7] == 0));
    BOOST_TEST(b[8] == 0x08); // job id little-endian
    BOOST_TEST(b[15] == 0x01);
    BOOST_TEST(std::memcmp(&b[16], r.from.data(), 32) == 0);
    BOOST_TEST(std::memcmp(&b[48], r.to.data(), 32) == 0);
    BOOST_TEST(std::memcmp(&b[80], r.connector_nonce.data(), 16) == 0);
    auto d = wire::decode_route_request(b.data(), b.size());
    BOOST_REQUIRE(!error_of(d));
    const auto& g = std::get<wire::route_request>(d);
    BOOST_TEST(g.job_id == r.job_id);
    BOOST_TEST((g.from == r.from));
    BOOST_TEST((g.to == r.to));
    BOOST_TEST((g.connector_nonce == r.connector_nonce));
}

BOOST_AUTO_TEST_CASE(route_request_decoder_refuses_bad_input)
{
    const auto good = wire::encode(sample_request());
    BOOST_TEST(says(wire::decode_route_request(good.data(), good.size() - 1), "95 bytes, expected 96"));
    std::array<std::uint8_t, 97> longer {};
    std::memcpy(longer.data(), good.data(), good.size());
    BOOST_TEST(says(wire::decode_route_request(longer.data(), longer.size()), "97 bytes"));
    BOOST_TEST(says(wire::decode_route_request(nullptr, 96), "bytes"));
    auto b = good;
    b[0] = 'G';
    BOOST_TEST(says(wire::decode_route_request(b.data(), b.size()), "magic"));
    b = good;
    std::memcpy(b.data(), "HRCH", 4); // another message's magic
    BOOST_TEST(says(wire::decode_route_request(b.data(), b.size()), "magic"));
    b = good;
    b[4] = 2;
    BOOST_TEST(says(wire::decode_route_request(b.data(), b.size()), "version 2"));
    for (std::size_t i = 5; i < 8; ++i) {
        b = good;
        b[i] = 1;
        BOOST_TEST(says(wire::decode_route_request(b.data(), b.size()), "reserved"), "byte " << i);
    }
    b = good;
    b[16] = 'Z';
    BOOST_TEST(says(wire::decode_route_request(b.data(), b.size()), "sender's card"));
    b = good;
    b[48 + 30] = 1; // the card's reserved bytes
    BOOST_TEST(says(wire::decode_route_request(b.data(), b.size()), "wanted card"));
    b = good;
    std::memcpy(&b[48], &b[16], 32);
    BOOST_TEST(says(wire::decode_route_request(b.data(), b.size()), "own card"));
}

BOOST_AUTO_TEST_CASE(route_challenge_and_proof_round_trip_and_refuse_bad_input)
{
    wire::route_challenge c;
    c.relay_nonce = fi::fresh_nonce();
    for (std::size_t i = 0; i < c.relay_mac.size(); ++i)
        c.relay_mac[i] = static_cast<std::uint8_t>(i);
    const auto cb = wire::encode(c);
    BOOST_TEST(cb.size() == 56u);
    BOOST_TEST(std::memcmp(cb.data(), "HRCH", 4) == 0);
    BOOST_TEST(std::memcmp(&cb[8], c.relay_nonce.data(), 16) == 0);
    BOOST_TEST(std::memcmp(&cb[24], c.relay_mac.data(), 32) == 0);
    auto cd = wire::decode_route_challenge(cb.data(), cb.size());
    BOOST_REQUIRE(!error_of(cd));
    BOOST_TEST((std::get<wire::route_challenge>(cd).relay_nonce == c.relay_nonce));
    BOOST_TEST((std::get<wire::route_challenge>(cd).relay_mac == c.relay_mac));

    wire::route_proof p;
    p.rank_mac[0] = 0x55;
    p.rank_mac[31] = 0xaa;
    const auto pb = wire::encode(p);
    BOOST_TEST(pb.size() == 40u);
    BOOST_TEST(std::memcmp(pb.data(), "HRPF", 4) == 0);
    BOOST_TEST(std::memcmp(&pb[8], p.rank_mac.data(), 32) == 0);
    auto pd = wire::decode_route_proof(pb.data(), pb.size());
    BOOST_REQUIRE(!error_of(pd));
    BOOST_TEST((std::get<wire::route_proof>(pd).rank_mac == p.rank_mac));

    BOOST_TEST(says(wire::decode_route_challenge(cb.data(), cb.size() - 1), "bytes"));
    BOOST_TEST(says(wire::decode_route_proof(pb.data(), pb.size() + 1), "bytes"));
    // A proof's magic where a challenge is expected.
    std::array<std::uint8_t, 56> swapped = cb;
    std::memcpy(swapped.data(), "HRPF", 4);
    BOOST_TEST(says(wire::decode_route_challenge(swapped.data(), swapped.size()), "magic"));
    auto b = cb;
    b[4] = 0;
    BOOST_TEST(says(wire::decode_route_challenge(b.data(), b.size()), "version 0"));
    auto q = pb;
    q[4] = 9;
    BOOST_TEST(says(wire::decode_route_proof(q.data(), q.size()), "version 9"));
    for (std::size_t i = 5; i < 8; ++i) {
        b = cb;
        b[i] = 0x80;
        BOOST_TEST(says(wire::decode_route_challenge(b.data(), b.size()), "reserved"), "byte " << i);
        q = pb;
        q[i] = 0x80;
        BOOST_TEST(says(wire::decode_route_proof(q.data(), q.size()), "reserved"), "byte " << i);
    }
    q = pb;
    q[2] = 'X';
    BOOST_TEST(says(wire::decode_route_proof(q.data(), q.size()), "magic"));
}

BOOST_AUTO_TEST_CASE(route_result_decodes_from_a_growing_prefix)
{
    for (auto status : {wire::route_status::ok, wire::route_status::refused, wire::route_status::unreachable,
             wire::route_status::no_trunk, wire::route_status::busy}) {
        const wire::route_result r {status, status == wire::route_status::ok ? "" : "no trunk to cluster 2"};
        const auto b = wire::encode(r);
        BOOST_TEST(b.size() == 8 + r.reason.size());
        BOOST_TEST(std::memcmp(b.data(), "HRRS", 4) == 0);
        BOOST_TEST(b[5] == static_cast<std::uint8_t>(status));
        BOOST_TEST((b[6] | b[7] << 8) == static_cast<int>(r.reason.size()));
        // Every prefix short of the message asks for more, never for less
        // than the prefix has, never more than the message.
        for (std::size_t n = 0; n < b.size(); ++n) {
            auto d = wire::decode_route_result(b.data(), n);
            BOOST_REQUIRE_MESSAGE(std::holds_alternative<wire::need_more>(d), "prefix " << n);
            const std::size_t want = std::get<wire::need_more>(d).bytes;
            BOOST_TEST(want > n);
            BOOST_TEST(want <= b.size());
        }
        auto d = wire::decode_route_result(b.data(), b.size());
        BOOST_REQUIRE(std::holds_alternative<wire::route_result>(d));
        const auto& g = std::get<wire::route_result>(d);
        BOOST_TEST((g.status == status));
        BOOST_TEST(g.reason == r.reason);
        BOOST_TEST(g.encoded_size() == b.size());
        // What follows the message (the destination's challenge) is not its.
        auto more = b;
        more.push_back(0xff);
        more.push_back(0x00);
        auto dm = wire::decode_route_result(more.data(), more.size());
        BOOST_REQUIRE(std::holds_alternative<wire::route_result>(dm));
        BOOST_TEST(std::get<wire::route_result>(dm).encoded_size() == b.size());
    }
    // The longest reason.
    const wire::route_result longest {wire::route_status::busy, std::string(200, 'x')};
    const auto lb = wire::encode(longest);
    BOOST_TEST(lb.size() == 208u);
    BOOST_TEST(std::holds_alternative<wire::route_result>(wire::decode_route_result(lb.data(), lb.size())));
    // The encoder keeps to what the decoder accepts.
    const wire::route_result unruly {wire::route_status::refused, std::string(300, '\n')};
    const auto ub = wire::encode(unruly);
    BOOST_TEST(ub.size() == 208u);
    auto ud = wire::decode_route_result(ub.data(), ub.size());
    BOOST_REQUIRE(std::holds_alternative<wire::route_result>(ud));
    BOOST_TEST(std::get<wire::route_result>(ud).reason == std::string(200, '?'));
}

BOOST_AUTO_TEST_CASE(route_result_decoder_refuses_bad_input_as_soon_as_it_arrives)
{
    const auto good = wire::encode(wire::route_result {wire::route_status::refused, "not this job"});
    auto b = good;
    b[0] = 'H';
    b[1] = 'T'; // "HTTP/1.1 ..."
    BOOST_TEST(says(wire::decode_route_result(b.data(), 2), "magic"));
    b = good;
    b[4] = 2;
    BOOST_TEST(says(wire::decode_route_result(b.data(), 5), "version 2"));
    b = good;
    b[5] = 5;
    BOOST_TEST(says(wire::decode_route_result(b.data(), 6), "status 5"));
    b[5] = 0xff;
    BOOST_TEST(says(wire::decode_route_result(b.data(), b.size()), "status 255"));
    b = good;
    b[6] = 201;
    b[7] = 0;
    BOOST_TEST(says(wire::decode_route_result(b.data(), 8), "201 bytes, at most 200"));
    b[6] = 0;
    b[7] = 1; // 256
    BOOST_TEST(says(wire::decode_route_result(b.data(), 8), "256 bytes"));
    for (std::uint8_t bad : {0x00, 0x09, 0x0a, 0x1f, 0x7f, 0x80, 0xff}) {
        b = good;
        b[8 + 3] = bad;
        BOOST_TEST(says(wire::decode_route_result(b.data(), b.size()), "non-printable"), "byte " << int(bad));
        // Refused before the rest of the reason is there.
        BOOST_TEST(says(wire::decode_route_result(b.data(), 8 + 4), "non-printable"), "byte " << int(bad));
    }
    BOOST_TEST(says(wire::decode_route_result(nullptr, 3), "no bytes"));
}

BOOST_AUTO_TEST_CASE(liveness_envelope_is_the_documented_88_bytes)
{
    wire::job_key k {};
    k.fill(3);
    wire::heartbeat h;
    h.sender = 1;
    h.target = 2;
    h.challenge.fill(0x42);
    const auto hb = wire::encode_heartbeat(h, k);
    const wire::relay_liveness l {0x0a010203u, 40123, 0x0102, hb};
    const auto b = wire::encode(l);
    BOOST_TEST(b.size() == 88u);
    BOOST_TEST(std::memcmp(b.data(), "HRLV", 4) == 0);
    BOOST_TEST(b[4] == 1);
    BOOST_TEST(b[5] == 0);
    BOOST_TEST((b[6] == (40123 >> 8) && b[7] == (40123 & 0xff))); // big-endian
    BOOST_TEST((b[8] == 10 && b[9] == 1 && b[10] == 2 && b[11] == 3));
    BOOST_TEST((b[12] == 1 && b[13] == 2 && b[14] == 0 && b[15] == 0)); // cluster, big-endian; reserved
    BOOST_TEST(std::memcmp(&b[16], hb.data(), hb.size()) == 0); // unchanged, MAC included
    auto d = wire::decode_relay_liveness(b.data(), b.size());
    BOOST_REQUIRE(!error_of(d));
    const auto& g = std::get<wire::relay_liveness>(d);
    BOOST_TEST(g.to_ipv4 == l.to_ipv4);
    BOOST_TEST(g.to_port == l.to_port);
    BOOST_TEST(g.to_cluster == l.to_cluster);
    BOOST_TEST((g.heartbeat == hb));
    BOOST_TEST(wire::verify_heartbeat(g.heartbeat.data(), k));

    BOOST_TEST(says(wire::decode_relay_liveness(b.data(), 87), "87 bytes"));
    BOOST_TEST(says(wire::decode_relay_liveness(b.data(), 84), "84 bytes")); // the envelope before the cluster
    BOOST_TEST(says(wire::decode_relay_liveness(hb.data(), hb.size()), "72 bytes")); // a bare heartbeat
    auto x = b;
    x[3] = 'B';
    BOOST_TEST(says(wire::decode_relay_liveness(x.data(), x.size()), "magic"));
    x = b;
    x[4] = 7;
    BOOST_TEST(says(wire::decode_relay_liveness(x.data(), x.size()), "version 7"));
    x = b;
    x[5] = 1;
    BOOST_TEST(says(wire::decode_relay_liveness(x.data(), x.size()), "reserved"));
    for (const int at : {14, 15}) {
        x = b;
        x[at] = 0x80;
        BOOST_TEST(says(wire::decode_relay_liveness(x.data(), x.size()), "reserved"), "byte " << at);
    }
    x = b;
    x[6] = x[7] = 0;
    BOOST_TEST(says(wire::decode_relay_liveness(x.data(), x.size()), "port 0"));
    x = b;
    std::memset(&x[8], 0, 4);
    BOOST_TEST(says(wire::decode_relay_liveness(x.data(), x.size()), "single host"));
    std::memset(&x[8], 0xff, 4);
    BOOST_TEST(says(wire::decode_relay_liveness(x.data(), x.size()), "single host"));
}

BOOST_AUTO_TEST_CASE(route_macs_are_bound_to_key_side_and_every_field)
{
    const auto k = key('a');
    const auto t = sample_transcript();
    const auto relay = k.relay_route_mac(t);
    const auto rank = k.rank_route_mac(t);
    BOOST_TEST(!fi::same_mac(relay, rank)); // a reflected MAC never passes for the other side
    BOOST_TEST(fi::same_mac(relay, k.relay_route_mac(t))); // deterministic
    BOOST_TEST(!fi::same_mac(relay, key('b').relay_route_mac(t)));
    // The documented input: label, then job_id (LE) || from || to || Nc || Nr.
    const auto in = wire::route_mac_input(t);
    BOOST_TEST(in.size() == 104u);
    BOOST_TEST(in[0] == (t.job_id & 0xff));
    BOOST_TEST(std::memcmp(&in[8], t.from.data(), 32) == 0);
    BOOST_TEST(std::memcmp(&in[40], t.to.data(), 32) == 0);
    BOOST_TEST(std::memcmp(&in[72], t.connector_nonce.data(), 16) == 0);
    BOOST_TEST(std::memcmp(&in[88], t.relay_nonce.data(), 16) == 0);
    BOOST_TEST(fi::same_mac(relay, k.sign("hashi relay route v1 relay", in)));
    BOOST_TEST(fi::same_mac(rank, k.sign("hashi relay route v1 rank", in)));
    // Every field changes both MACs.
    auto changed = [&](auto&& edit) {
        auto u = t;
        edit(u);
        return !fi::same_mac(relay, k.relay_route_mac(u)) && !fi::same_mac(rank, k.rank_route_mac(u));
    };
    BOOST_TEST(changed([](auto& u) { u.job_id ^= 1; }));
    BOOST_TEST(changed([](auto& u) { u.from[12] ^= 1; }));
    BOOST_TEST(changed([](auto& u) { u.to[12] ^= 1; }));
    BOOST_TEST(changed([](auto& u) { u.connector_nonce[15] ^= 1; }));
    BOOST_TEST(changed([](auto& u) { u.relay_nonce[0] ^= 1; }));
    BOOST_TEST(changed([](auto& u) { std::swap(u.from, u.to); }));
    // Not the connection handshake's MACs over the same cards and nonces.
    fi::handshake_transcript h;
    h.job_id = t.job_id;
    h.connector = t.from;
    h.acceptor = t.to;
    h.connector_nonce = t.connector_nonce;
    h.acceptor_nonce = t.relay_nonce;
    BOOST_TEST(!fi::same_mac(relay, k.acceptor_mac(h)));
    BOOST_TEST(!fi::same_mac(rank, k.connector_mac(h)));
}
