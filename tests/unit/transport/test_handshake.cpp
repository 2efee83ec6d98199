// SPDX-License-Identifier: BSD-3-Clause
// The authenticated handshake: its four messages encoded and decoded, every
// way decoding refuses input, and the properties of the MACs the endpoint
// relies on (bound to the key, both addresses, both nonces, the verdict and
// the direction).
#include "transport/address.hpp"
#include "transport/engine/job_key.hpp"
#include "transport/wire/handshake.hpp"

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <cstring>

using namespace hashi;

namespace {

fi::endpoint_address address(std::uint16_t port)
{
    fi::endpoint_address a;
    a.cluster_id = 1;
    a.ipv4 = 0x0a010002;
    a.port = port;
    a.nonce = 0x0123456789abcdefULL + port;
    return a;
}

template <class T> const wire::decode_error* error_of(const std::variant<T, wire::decode_error>& v)
{
    return std::get_if<wire::decode_error>(&v);
}

template <class T> bool says(const std::variant<T, wire::decode_error>& v, const char* word)
{
    const auto* e = error_of(v);
    return e != nullptr && e->reason.find(word) != std::string::npos;
}

const std::string key_a(64, 'a');
const std::string key_b = std::string(63, 'a') + "b";

fi::handshake_transcript sample_transcript()
{
    fi::handshake_transcript t;
    t.job_id = 0xfeedface12345678ULL;
    t.connector = address(40001).encode();
    t.acceptor = address(40002).encode();
    t.connector_nonce = fi::fresh_nonce();
    t.acceptor_nonce = fi::fresh_nonce();
    return t;
}

} // namespace

BOOST_AUTO_TEST_CASE(handshake_messages_round_trip)
{
    wire::hello h;
    h.from = address(40001).encode();
    h.to = address(40002).encode();
    h.connector_nonce = fi::fresh_nonce();
    h.lane = 3; // a stripe lane
    const auto hb = wire::encode(h);
    BOOST_TEST(hb.size() == wire::handshake_payload_size(wire::frame_type::hello));
    auto hd = wire::decode_hello(hb.data(), hb.size());
    BOOST_REQUIRE(!error_of(hd));
    BOOST_TEST((std::get<wire::hello>(hd).from == h.from));
    BOOST_TEST((std::get<wire::hello>(hd).to == h.to));
    BOOST_TEST((std::get<wire::hello>(hd).connector_nonce == h.connector_nonce));
    BOOST_TEST(std::get<wire::hello>(hd).lane == 3);

    wire::challenge c;
    c.acceptor_nonce = fi::fresh_nonce();
    c.status = wire::hello_status::duplicate;
    c.acceptor_mac[0] = 7;
    const auto cb = wire::encode(c);
    auto cd = wire::decode_challenge(cb.data(), cb.size());
    BOOST_REQUIRE(!error_of(cd));
    BOOST_TEST((std::get<wire::challenge>(cd).status == wire::hello_status::duplicate));
    BOOST_TEST((std::get<wire::challenge>(cd).acceptor_mac == c.acceptor_mac));
    BOOST_TEST((std::get<wire::challenge>(cd).acceptor_nonce == c.acceptor_nonce));

    wire::proof p;
    p.connector_mac[31] = 9;
    p.who = {4242, "c0n1"};
    const auto pb = wire::encode(p);
    auto pd = wire::decode_proof(pb.data(), pb.size());
    BOOST_REQUIRE(!error_of(pd));
    BOOST_TEST(std::get<wire::proof>(pd).who.pid == 4242u);
    BOOST_TEST(std::get<wire::proof>(pd).who.host == "c0n1");
    BOOST_TEST((std::get<wire::proof>(pd).connector_mac == p.connector_mac));

    wire::hello_ack a;
    a.who = {7, "gateway-0"};
    const auto ab = wire::encode(a);
    auto ad = wire::decode_hello_ack(ab.data(), ab.size());
    BOOST_REQUIRE(!error_of(ad));
    BOOST_TEST(std::get<wire::hello_ack>(ad).who.host == "gateway-0");
}

BOOST_AUTO_TEST_CASE(handshake_decoders_refuse_bad_input)
{
    wire::hello h;
    h.from = address(1).encode();
    h.to = address(2).encode();
    const auto good = wire::encode(h);
    BOOST_TEST(says(wire::decode_hello(good.data(), good.size() - 1), "bytes"));
    auto b = good;
    b[0] = 'G'; // an HTTP client, say
    BOOST_TEST(says(wire::decode_hello(b.data(), b.size()), "magic"));
    b = good;
    b[7] = 1; // the unauthenticated handshake of earlier versions
    BOOST_TEST(says(wire::decode_hello(b.data(), b.size()), "version"));
    b = good;
    b[8] = 'Z';
    BOOST_TEST(says(wire::decode_hello(b.data(), b.size()), "address"));
    b = good;
    b[40] = 'Z';
    BOOST_TEST(says(wire::decode_hello(b.data(), b.size()), "address"));
    b = good;
    b[7] = 2; // version 2 had no lane
    BOOST_TEST(says(wire::decode_hello(b.data(), b.size()), "version"));
    b = good;
    b[88] = wire::max_lanes; // one lane beyond the bound
    BOOST_TEST(says(wire::decode_hello(b.data(), b.size()), "lane 8"));
    b = good;
    b[95] = 1;
    BOOST_TEST(says(wire::decode_hello(b.data(), b.size()), "reserved"));

    const auto ch = wire::encode(wire::challenge {});
    auto cb = ch;
    cb[24] = 2; // status
    BOOST_TEST(says(wire::decode_challenge(cb.data(), cb.size()), "status"));
    cb = ch;
    cb[29] = 1;
    BOOST_TEST(says(wire::decode_challenge(cb.data(), cb.size()), "reserved"));

    wire::proof p;
    p.who = {1, "node"};
    const auto pr = wire::encode(p);
    auto pb = pr;
    std::memset(&pb[48], 'x', wire::host_name_size); // no terminator
    BOOST_TEST(says(wire::decode_proof(pb.data(), pb.size()), "terminated"));
    pb = pr;
    pb[49] = '\n';
    BOOST_TEST(says(wire::decode_proof(pb.data(), pb.size()), "printable"));
    pb = pr;
    pb[48 + 10] = 'y'; // bytes after the terminator
    BOOST_TEST(says(wire::decode_proof(pb.data(), pb.size()), "after the host name"));
    pb = pr;
    pb[44] = 1;
    BOOST_TEST(says(wire::decode_proof(pb.data(), pb.size()), "reserved"));
    const auto ack = wire::encode(wire::hello_ack {});
    BOOST_TEST(says(wire::decode_hello_ack(ack.data(), ack.size() - 1), "bytes"));
}

BOOST_AUTO_TEST_CASE(macs_bind_key_addresses_nonces_verdict_and_direction)
{
    const auto k = fi::job_key::from_hex(key_a);
    const auto other = fi::job_key::from_hex(key_b);
    BOOST_REQUIRE(k.has_value());
    BOOST_REQUIRE(other.has_value());
    const auto t = sample_transcript();
    const auto base = k->acceptor_mac(t);
    BOOST_TEST(fi::same_mac(base, k->acceptor_mac(t)));
    BOOST_TEST(!fi::same_mac(base, k->connector_mac(t))); // no reflection
    BOOST_TEST(!fi::same_mac(base, other->acceptor_mac(t))); // no other key
    auto changed = [&](auto edit) {
        auto u = t;
        edit(u);
        return !fi::same_mac(base, k->acceptor_mac(u));
    };
    BOOST_TEST(changed([](auto& u) { u.job_id ^= 1; }));
    BOOST_TEST(changed([](auto& u) { u.connector[20] ^= 1; }));
    BOOST_TEST(changed([](auto& u) { u.acceptor[20] ^= 1; }));
    BOOST_TEST(changed([](auto& u) { std::swap(u.connector, u.acceptor); }));
    BOOST_TEST(changed([](auto& u) { u.connector_nonce[0] ^= 1; }));
    BOOST_TEST(changed([](auto& u) { u.acceptor_nonce[15] ^= 1; }));
    BOOST_TEST(changed([](auto& u) { u.status = wire::hello_status::duplicate; }));
    BOOST_TEST(changed([](auto& u) { u.lane = 1; })); // a lane cannot be relabelled
    // Fresh nonces differ.
    BOOST_TEST((fi::fresh_nonce() != fi::fresh_nonce()));
}

BOOST_AUTO_TEST_CASE(job_key_parsing)
{
    BOOST_TEST(fi::job_key::from_hex(key_a).has_value());
    BOOST_TEST(fi::job_key::from_hex(std::string(64, 'F')).has_value());
    BOOST_TEST(!fi::job_key::from_hex(std::string(63, 'a')).has_value());
    BOOST_TEST(!fi::job_key::from_hex(std::string(65, 'a')).has_value());
    BOOST_TEST(!fi::job_key::from_hex(std::string(63, 'a') + "g").has_value());
    BOOST_TEST(!fi::job_key::from_hex("").has_value());

    std::string err;
    ::unsetenv(fi::job_key::variable);
    auto r = fi::job_key::from_environment(err);
    BOOST_REQUIRE(r.has_value());
    BOOST_TEST(r->is_random());
    // Two processes without a key cannot talk: their random keys differ.
    const auto t = sample_transcript();
    BOOST_TEST(!fi::same_mac(r->acceptor_mac(t), fi::job_key::random().acceptor_mac(t)));

    ::setenv(fi::job_key::variable, key_a.c_str(), 1);
    r = fi::job_key::from_environment(err);
    BOOST_REQUIRE(r.has_value());
    BOOST_TEST(!r->is_random());
    BOOST_TEST(fi::same_mac(r->acceptor_mac(t), fi::job_key::from_hex(key_a)->acceptor_mac(t)));

    const std::string secretish = "0123456789secret";
    ::setenv(fi::job_key::variable, secretish.c_str(), 1);
    err.clear();
    BOOST_TEST(!fi::job_key::from_environment(err).has_value());
    BOOST_TEST(err.find(fi::job_key::variable) != std::string::npos);
    BOOST_TEST(err.find("secret") == std::string::npos); // the value is never echoed
    ::unsetenv(fi::job_key::variable);
}
