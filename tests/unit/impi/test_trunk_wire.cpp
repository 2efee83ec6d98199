// SPDX-License-Identifier: BSD-3-Clause
// The bytes between two relays: the trunk handshake messages and the frame
// header, their exact layout, and the refusal of everything else.
#include "relay/relay/trunk_wire.hpp"

#include <boost/test/unit_test.hpp>

#include <cstring>

using namespace hashi::relay;

BOOST_AUTO_TEST_SUITE(relay_trunk_wire)

BOOST_AUTO_TEST_CASE(hello_layout_and_round_trip)
{
    trunk_hello h;
    h.job_id = 0x0102030405060708ull;
    h.from = {1, 2};
    h.to = {0, 2};
    for (std::size_t i = 0; i < h.connector_nonce.size(); ++i) {
        h.connector_nonce[i] = static_cast<std::uint8_t>(i);
    }
    const auto b = encode(h);
    BOOST_REQUIRE(b.size() == trunk_hello_size);
    BOOST_TEST(std::memcmp(b.data(), "HTRH\x01\0\0\0", 8) == 0);
    BOOST_TEST(b[8] == 0x08); // little-endian job id
    BOOST_TEST(b[16] == 1); // from cluster
    auto back = decode_trunk_hello(b.data(), b.size());
    BOOST_REQUIRE(std::holds_alternative<trunk_hello>(back));
    const auto& v = std::get<trunk_hello>(back);
    BOOST_TEST(v.job_id == h.job_id);
    BOOST_TEST((v.from == h.from && v.to == h.to && v.connector_nonce == h.connector_nonce));
}

BOOST_AUTO_TEST_CASE(handshake_decoders_refuse_junk)
{
    trunk_hello h;
    h.job_id = 5;
    h.from = {1, 0};
    auto b = encode(h);
    auto reason = [](const auto& r) { return std::get<wire_error>(r).reason; };
    BOOST_TEST(reason(decode_trunk_hello(b.data(), b.size() - 1)).find("size") != std::string::npos);
    auto c = b;
    c[0] = 'X';
    BOOST_TEST(reason(decode_trunk_hello(c.data(), c.size())).find("magic") != std::string::npos);
    c = b;
    c[4] = 2;
    BOOST_TEST(reason(decode_trunk_hello(c.data(), c.size())).find("version") != std::string::npos);
    c = b;
    c[6] = 1;
    BOOST_TEST(reason(decode_trunk_hello(c.data(), c.size())).find("reserved") != std::string::npos);
    h.to = {1, 3}; // same cluster on both ends
    b = encode(h);
    BOOST_TEST(reason(decode_trunk_hello(b.data(), b.size())).find("same cluster") != std::string::npos);
    h.to = {0, 0};
    h.job_id = 0;
    b = encode(h);
    BOOST_TEST(reason(decode_trunk_hello(b.data(), b.size())).find("job id 0") != std::string::npos);
    // A challenge is not a proof, and the other way round.
    const auto ch = encode(trunk_challenge {});
    const auto pr = encode(trunk_proof {});
    BOOST_TEST(std::holds_alternative<wire_error>(decode_trunk_proof(ch.data(), pr.size())));
    BOOST_TEST(std::holds_alternative<trunk_challenge>(decode_trunk_challenge(ch.data(), ch.size())));
    BOOST_TEST(std::holds_alternative<trunk_proof>(decode_trunk_proof(pr.data(), pr.size())));
}

BOOST_AUTO_TEST_CASE(transcript_binds_every_field)
{
    trunk_hello h;
    h.job_id = 9;
    h.from = {2, 1};
    h.to = {0, 1};
    trunk_nonce na {};
    const auto base = trunk_transcript(h, na);
    BOOST_TEST(base.size() == 8 + 8 + 2 * trunk_nonce_size);
    auto other = h;
    other.from.relay = 0;
    BOOST_TEST((trunk_transcript(other, na) != base));
    other = h;
    other.job_id = 10;
    BOOST_TEST((trunk_transcript(other, na) != base));
    na[15] = 1;
    BOOST_TEST((trunk_transcript(h, na) != base));
}

BOOST_AUTO_TEST_CASE(frame_header_lengths_per_kind)
{
    auto decode = [](frame_kind k, std::uint32_t len, std::uint32_t aux = 0) {
        const auto b = encode(frame_header {k, 3, len, aux});
        return decode_frame_header(b.data());
    };
    BOOST_TEST(std::holds_alternative<frame_header>(decode(frame_kind::open, 64)));
    BOOST_TEST(std::holds_alternative<wire_error>(decode(frame_kind::open, 63)));
    BOOST_TEST(std::holds_alternative<frame_header>(decode(frame_kind::data, max_payload)));
    BOOST_TEST(std::holds_alternative<wire_error>(decode(frame_kind::data, max_payload + 1)));
    BOOST_TEST(std::holds_alternative<wire_error>(decode(frame_kind::data, 0)));
    BOOST_TEST(std::holds_alternative<wire_error>(decode(frame_kind::credit, 1)));
    BOOST_TEST(std::holds_alternative<frame_header>(decode(frame_kind::close, max_reason)));
    BOOST_TEST(std::holds_alternative<wire_error>(decode(frame_kind::close, max_reason + 1)));
    BOOST_TEST(std::holds_alternative<frame_header>(decode(frame_kind::heartbeat, 84, 1)));
    BOOST_TEST(std::holds_alternative<wire_error>(decode(frame_kind::heartbeat, 84, 2)));
    auto b = encode(frame_header {frame_kind::ping, 0, 0, 7});
    b[0] = 0;
    BOOST_TEST(std::holds_alternative<wire_error>(decode_frame_header(b.data())));
    b[0] = 9;
    BOOST_TEST(std::holds_alternative<wire_error>(decode_frame_header(b.data())));
    b[0] = 6;
    b[1] = 1;
    BOOST_TEST(std::holds_alternative<wire_error>(decode_frame_header(b.data())));
}

BOOST_AUTO_TEST_CASE(heartbeat_route_and_reason)
{
    heartbeat_route r {0x0a00000a, 4000, 0x0a01000b, 5000};
    const auto b = encode(r);
    BOOST_TEST(b[0] == 10); // big-endian, as in a card
    auto back = decode_heartbeat_route(b.data(), b.size());
    BOOST_REQUIRE(std::holds_alternative<heartbeat_route>(back));
    BOOST_TEST(std::get<heartbeat_route>(back).target_port == 5000);
    r.origin_port = 0;
    const auto z = encode(r);
    BOOST_TEST(std::holds_alternative<wire_error>(decode_heartbeat_route(z.data(), z.size())));
    const std::uint8_t ok[] = "no trunk";
    BOOST_TEST(std::get<std::string>(decode_reason(ok, 8)) == "no trunk");
    const std::uint8_t bell[] = {'a', 7};
    BOOST_TEST(std::holds_alternative<wire_error>(decode_reason(bell, 2)));
}

BOOST_AUTO_TEST_SUITE_END()
