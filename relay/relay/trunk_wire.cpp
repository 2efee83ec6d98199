// SPDX-License-Identifier: BSD-3-Clause
#include "relay/relay/trunk_wire.hpp"

#include <algorithm>
#include <cstring>

namespace hashi::relay {

namespace {

void put_le(std::vector<std::uint8_t>& out, std::uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; ++i) {
        out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
    }
}

std::uint64_t get_le(const std::uint8_t* p, int bytes)
{
    std::uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) {
        v = v << 8 | p[i];
    }
    return v;
}

std::uint64_t get_be(const std::uint8_t* p, int bytes)
{
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) {
        v = v << 8 | p[i];
    }
    return v;
}

void put_be(std::uint8_t* p, std::uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; ++i) {
        p[i] = static_cast<std::uint8_t>(v >> (8 * (bytes - 1 - i)));
    }
}

void put_magic(std::vector<std::uint8_t>& out, const char* magic)
{
    out.insert(out.end(), magic, magic + 4);
    out.push_back(trunk_version);
    out.insert(out.end(), 3, 0);
}

// Checks size, magic, version and the reserved bytes of a message.
const char* check_start(const std::uint8_t* p, std::size_t n, std::size_t want, const char* magic)
{
    if (n != want) {
        return "wrong size";
    }
    if (std::memcmp(p, magic, 4) != 0) {
        return "wrong magic";
    }
    if (p[4] != trunk_version) {
        return "unknown version";
    }
    if (p[5] != 0 || p[6] != 0 || p[7] != 0) {
        return "reserved bytes are not zero";
    }
    return nullptr;
}

template <class T> std::variant<T, wire_error> fail(const char* what, const char* why)
{
    return wire_error {std::string(what) + ": " + why};
}

} // namespace

std::string to_string(const relay_name& n)
{
    return "relay " + std::to_string(n.relay) + " of cluster " + std::to_string(n.cluster);
}

std::vector<std::uint8_t> encode(const trunk_hello& h)
{
    std::vector<std::uint8_t> out;
    put_magic(out, "HTRH");
    put_le(out, h.job_id, 8);
    put_le(out, h.from.cluster, 2);
    put_le(out, h.from.relay, 2);
    put_le(out, h.to.cluster, 2);
    put_le(out, h.to.relay, 2);
    out.insert(out.end(), h.connector_nonce.begin(), h.connector_nonce.end());
    return out;
}

std::vector<std::uint8_t> encode(const trunk_challenge& c)
{
    std::vector<std::uint8_t> out;
    put_magic(out, "HTRC");
    out.insert(out.end(), c.acceptor_nonce.begin(), c.acceptor_nonce.end());
    out.insert(out.end(), c.acceptor_mac.begin(), c.acceptor_mac.end());
    return out;
}

std::vector<std::uint8_t> encode(const trunk_proof& p)
{
    std::vector<std::uint8_t> out;
    put_magic(out, "HTRP");
    out.insert(out.end(), p.connector_mac.begin(), p.connector_mac.end());
    return out;
}

std::variant<trunk_hello, wire_error> decode_trunk_hello(const std::uint8_t* p, std::size_t n)
{
    if (const char* why = check_start(p, n, trunk_hello_size, "HTRH")) {
        return fail<trunk_hello>("trunk hello", why);
    }
    trunk_hello h;
    h.job_id = get_le(p + 8, 8);
    h.from = {static_cast<std::uint16_t>(get_le(p + 16, 2)), static_cast<std::uint16_t>(get_le(p + 18, 2))};
    h.to = {static_cast<std::uint16_t>(get_le(p + 20, 2)), static_cast<std::uint16_t>(get_le(p + 22, 2))};
    std::copy_n(p + 24, trunk_nonce_size, h.connector_nonce.begin());
    if (h.job_id == 0) {
        return fail<trunk_hello>("trunk hello", "job id 0");
    }
    if (h.from.cluster == h.to.cluster) {
        return fail<trunk_hello>("trunk hello", "both relays are of the same cluster");
    }
    return h;
}

std::variant<trunk_challenge, wire_error> decode_trunk_challenge(const std::uint8_t* p, std::size_t n)
{
    if (const char* why = check_start(p, n, trunk_challenge_size, "HTRC")) {
        return fail<trunk_challenge>("trunk challenge", why);
    }
    trunk_challenge c;
    std::copy_n(p + 8, trunk_nonce_size, c.acceptor_nonce.begin());
    std::copy_n(p + 24, trunk_mac_size, c.acceptor_mac.begin());
    return c;
}

std::variant<trunk_proof, wire_error> decode_trunk_proof(const std::uint8_t* p, std::size_t n)
{
    if (const char* why = check_start(p, n, trunk_proof_size, "HTRP")) {
        return fail<trunk_proof>("trunk proof", why);
    }
    trunk_proof pr;
    std::copy_n(p + 8, trunk_mac_size, pr.connector_mac.begin());
    return pr;
}

std::vector<std::uint8_t> trunk_transcript(const trunk_hello& h, const trunk_nonce& acceptor_nonce)
{
    std::vector<std::uint8_t> t;
    put_le(t, h.job_id, 8);
    put_le(t, h.from.cluster, 2);
    put_le(t, h.from.relay, 2);
    put_le(t, h.to.cluster, 2);
    put_le(t, h.to.relay, 2);
    t.insert(t.end(), h.connector_nonce.begin(), h.connector_nonce.end());
    t.insert(t.end(), acceptor_nonce.begin(), acceptor_nonce.end());
    return t;
}

const char* kind_name(frame_kind k) noexcept
{
    switch (k) {
    case frame_kind::open:
        return "open";
    case frame_kind::opened:
        return "opened";
    case frame_kind::data:
        return "data";
    case frame_kind::credit:
        return "credit";
    case frame_kind::close:
        return "close";
    case frame_kind::ping:
        return "ping";
    case frame_kind::pong:
        return "pong";
    case frame_kind::heartbeat:
        return "heartbeat";
    }
    return "unknown";
}

std::array<std::uint8_t, frame_header_size> encode(const frame_header& h)
{
    std::vector<std::uint8_t> v;
    put_le(v, static_cast<std::uint8_t>(h.kind), 1);
    put_le(v, 0, 3);
    put_le(v, h.stream, 4);
    put_le(v, h.length, 4);
    put_le(v, h.aux, 4);
    std::array<std::uint8_t, frame_header_size> out {};
    std::copy(v.begin(), v.end(), out.begin());
    return out;
}

std::variant<frame_header, wire_error> decode_frame_header(const std::uint8_t* p)
{
    frame_header h;
    const auto kind = p[0];
    if (kind < static_cast<std::uint8_t>(frame_kind::open) || kind > static_cast<std::uint8_t>(frame_kind::heartbeat)) {
        return wire_error {"trunk frame of unknown type " + std::to_string(kind)};
    }
    h.kind = static_cast<frame_kind>(kind);
    if (p[1] != 0 || p[2] != 0 || p[3] != 0) {
        return wire_error {std::string("trunk ") + kind_name(h.kind) + " frame with non-zero flags or reserved bytes"};
    }
    h.stream = static_cast<std::uint32_t>(get_le(p + 4, 4));
    h.length = static_cast<std::uint32_t>(get_le(p + 8, 4));
    h.aux = static_cast<std::uint32_t>(get_le(p + 12, 4));
    auto bad_length = [&](const char* want) {
        return wire_error {std::string("trunk ") + kind_name(h.kind) + " frame of " + std::to_string(h.length) +
            " bytes (" + want + ")"};
    };
    switch (h.kind) {
    case frame_kind::open:
        if (h.length != 64) {
            return bad_length("64 expected: two cards");
        }
        break;
    case frame_kind::opened:
    case frame_kind::close:
        if (h.length > max_reason) {
            return bad_length("a reason of at most 200 expected");
        }
        break;
    case frame_kind::data:
        if (h.length == 0 || h.length > max_payload) {
            return bad_length("1 to 65536 expected");
        }
        break;
    case frame_kind::credit:
    case frame_kind::ping:
    case frame_kind::pong:
        if (h.length != 0) {
            return bad_length("0 expected");
        }
        break;
    case frame_kind::heartbeat:
        if (h.length != heartbeat_route_size + liveness_datagram_size) {
            return bad_length("84 expected");
        }
        if (h.aux > 1) {
            return wire_error {"trunk heartbeat frame with direction " + std::to_string(h.aux) + " (0 or 1 expected)"};
        }
        break;
    }
    return h;
}

std::array<std::uint8_t, heartbeat_route_size> encode(const heartbeat_route& r)
{
    std::array<std::uint8_t, heartbeat_route_size> out {};
    put_be(out.data(), r.origin_ipv4, 4);
    put_be(out.data() + 4, r.origin_port, 2);
    put_be(out.data() + 6, r.target_ipv4, 4);
    put_be(out.data() + 10, r.target_port, 2);
    return out;
}

std::variant<heartbeat_route, wire_error> decode_heartbeat_route(const std::uint8_t* p, std::size_t n)
{
    if (n < heartbeat_route_size) {
        return wire_error {"heartbeat route shorter than 12 bytes"};
    }
    heartbeat_route r;
    r.origin_ipv4 = static_cast<std::uint32_t>(get_be(p, 4));
    r.origin_port = static_cast<std::uint16_t>(get_be(p + 4, 2));
    r.target_ipv4 = static_cast<std::uint32_t>(get_be(p + 6, 4));
    r.target_port = static_cast<std::uint16_t>(get_be(p + 10, 2));
    if (r.origin_ipv4 == 0 || r.target_ipv4 == 0 || r.origin_port == 0 || r.target_port == 0) {
        return wire_error {"heartbeat route with a zero address or port"};
    }
    return r;
}

std::variant<std::string, wire_error> decode_reason(const std::uint8_t* p, std::size_t n)
{
    if (n > max_reason) {
        return wire_error {"reason longer than 200 bytes"};
    }
    std::string s(reinterpret_cast<const char*>(p), n);
    for (unsigned char c : s) {
        if (c < 0x20 || c > 0x7e) {
            return wire_error {"reason with a byte that is not printable ASCII"};
        }
    }
    return s;
}

} // namespace hashi::relay
