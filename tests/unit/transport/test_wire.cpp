// SPDX-License-Identifier: BSD-3-Clause
// The provider's wire format: business-card addresses, frame headers and
// the handshake, encoded and decoded, and every way decoding refuses input.
#include "transport/address.hpp"
#include "transport/wire/frame.hpp"
#include "transport/wire/handshake.hpp"

#include <boost/test/unit_test.hpp>
#include <cstring>

using namespace hashi;

namespace {

fi::endpoint_address sample_address()
{
    fi::endpoint_address a;
    a.cluster_id = 3;
    a.ipv4 = 0x0a010002; // 10.1.0.2
    a.port = 40001;
    a.nonce = 0x0123456789abcdefULL;
    return a;
}

template <class T> const wire::decode_error* error_of(const std::variant<T, wire::decode_error>& v)
{
    return std::get_if<wire::decode_error>(&v);
}

} // namespace

BOOST_AUTO_TEST_CASE(address_round_trip_is_byte_exact)
{
    auto a = sample_address();
    a.via_relay = true;
    a.relay_ipv4 = 0xc0a86401;
    a.relay_port = 7000;
    const auto bytes = a.encode();
    BOOST_TEST(bytes.size() == fi::address_size);
    // MPICH compares cards with memcmp: the same address gives the same bytes.
    BOOST_TEST((a.encode() == bytes));
    auto back = fi::endpoint_address::decode(bytes.data(), bytes.size());
    BOOST_REQUIRE(back.has_value());
    BOOST_TEST((*back == a));
    BOOST_TEST(a.describe() == "10.1.0.2:40001 (cluster 3)");
}

BOOST_AUTO_TEST_CASE(address_decode_refuses_foreign_bytes)
{
    auto bytes = sample_address().encode();
    BOOST_TEST(!fi::endpoint_address::decode(bytes.data(), bytes.size() - 1).has_value());
    BOOST_TEST(!fi::endpoint_address::decode(nullptr, bytes.size()).has_value());
    auto bad = bytes;
    bad[0] = 'X';
    BOOST_TEST(!fi::endpoint_address::decode(bad.data(), bad.size()).has_value());
    bad = bytes;
    bad[2] = 99; // unknown format version
    BOOST_TEST(!fi::endpoint_address::decode(bad.data(), bad.size()).has_value());
    bad = bytes;
    bad[31] = 1; // reserved byte
    BOOST_TEST(!fi::endpoint_address::decode(bad.data(), bad.size()).has_value());
    bad = bytes;
    bad[6] = bad[7] = 0; // port 0
    BOOST_TEST(!fi::endpoint_address::decode(bad.data(), bad.size()).has_value());
}

BOOST_AUTO_TEST_CASE(header_round_trip_keeps_every_field)
{
    wire::frame_header h;
    h.type = wire::frame_type::tagged;
    h.flags = wire::flag_remote_data;
    h.seq = 0xfffffffe;
    h.length = 4096;
    h.tag = 0x0070000080000001ULL;
    h.data = 0xdeadbeef;
    h.a = 1;
    h.b = ~0ULL;
    h.c = 42;
    const auto bytes = wire::encode_header(h);
    auto d = wire::decode_header(bytes.data());
    BOOST_REQUIRE(!error_of(d));
    const auto& g = std::get<wire::frame_header>(d);
    BOOST_TEST((g.type == h.type));
    BOOST_TEST(g.flags == h.flags);
    BOOST_TEST(g.seq == h.seq);
    BOOST_TEST(g.length == h.length);
    BOOST_TEST(g.tag == h.tag);
    BOOST_TEST(g.data == h.data);
    BOOST_TEST(g.a == h.a);
    BOOST_TEST(g.b == h.b);
    BOOST_TEST(g.c == h.c);
}

BOOST_AUTO_TEST_CASE(header_decode_refuses_what_a_peer_must_not_send)
{
    wire::frame_header h;
    h.type = wire::frame_type::msg;
    auto bytes = wire::encode_header(h);

    auto b = bytes;
    b[0] = 0;
    BOOST_TEST(error_of(wire::decode_header(b.data()))->reason.find("unknown frame type") != std::string::npos);
    b[0] = 200;
    BOOST_TEST(error_of(wire::decode_header(b.data())) != nullptr);

    b = bytes;
    b[2] = 1;
    BOOST_TEST(error_of(wire::decode_header(b.data()))->reason.find("reserved") != std::string::npos);

    b = bytes;
    b[1] = wire::flag_tagged; // only rts may say tagged
    BOOST_TEST(error_of(wire::decode_header(b.data()))->reason.find("flags") != std::string::npos);

    // Eager payload above the protocol limit: the receiver would have to
    // buffer whatever the peer claims.
    h.length = wire::max_eager_payload + 1;
    BOOST_TEST(
        error_of(wire::decode_header(wire::encode_header(h).data()))->reason.find("payload") != std::string::npos);
    h.length = wire::max_eager_payload;
    BOOST_TEST(!error_of(wire::decode_header(wire::encode_header(h).data())));

    // Control frames carry no payload.
    for (auto t : {wire::frame_type::rts, wire::frame_type::cts, wire::frame_type::rma_write_ack,
             wire::frame_type::rma_read_req, wire::frame_type::bye}) {
        wire::frame_header c;
        c.type = t;
        c.length = 1;
        BOOST_TEST(error_of(wire::decode_header(wire::encode_header(c).data())) != nullptr);
    }
    // Data chunks are bounded too.
    wire::frame_header d;
    d.type = wire::frame_type::data;
    d.length = wire::max_chunk_payload + 1;
    BOOST_TEST(error_of(wire::decode_header(wire::encode_header(d).data())) != nullptr);
    // A handshake has exactly its size.
    wire::frame_header hs;
    hs.type = wire::frame_type::hello;
    hs.length = wire::hello_size - 1;
    BOOST_TEST(error_of(wire::decode_header(wire::encode_header(hs).data())) != nullptr);
}

