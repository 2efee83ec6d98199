// SPDX-License-Identifier: BSD-3-Clause
// The relay route messages and the liveness envelope (relay_route.hpp).
#include "transport/wire/relay_route.hpp"

#include "transport/wire/byte_order.hpp"

#include <algorithm>
#include <cstring>

namespace hashi::wire {

namespace {

constexpr std::size_t magic_bytes = 4;
constexpr char request_magic[] = "HRRQ";
constexpr char challenge_magic[] = "HRCH";
constexpr char proof_magic[] = "HRPF";
constexpr char result_magic[] = "HRRS";
constexpr char liveness_magic[] = "HRLV";

bool printable(std::uint8_t c) noexcept
{
    return c >= 0x20 && c <= 0x7e;
}

void put_magic(std::uint8_t* b, const char* magic) noexcept
{
    std::memcpy(b, magic, magic_bytes);
    b[4] = relay_route_version;
}

// The magic and the version of the first `len` bytes (as many of the five
// as there are); an empty string when they are right.
std::string check_magic(const char* what, const char* magic, const std::uint8_t* p, std::size_t len)
{
    if (std::memcmp(p, magic, std::min(len, magic_bytes)) != 0)
        return std::string("not a relay ") + what + " (wrong magic): is the relay address (HASHI_RELAYS) that of an " +
            "impi-relay?";
    if (len > magic_bytes && p[4] != relay_route_version)
        return std::string("relay ") + what + " of version " + std::to_string(p[4]) + ", this library speaks " +
            std::to_string(relay_route_version) + " (impi-relay and the ranks from different Hashi installations?)";
    return {};
}

// Length, magic, version and the reserved bytes [5, 8) of a fixed-size
// message; an empty string when they are right.
std::string check_fixed(const char* what, const char* magic, const std::uint8_t* p, std::size_t len, std::size_t want)
{
    if (p == nullptr || len != want)
        return std::string("relay ") + what + " of " + std::to_string(len) + " bytes, expected " +
            std::to_string(want);
    if (auto why = check_magic(what, magic, p, len); !why.empty())
        return why;
    if (p[5] != 0 || p[6] != 0 || p[7] != 0)
        return std::string("reserved bytes of the relay ") + what + " are not zero";
    return {};
}

} // namespace

std::array<std::uint8_t, route_mac_input_size> route_mac_input(const route_transcript& t) noexcept
{
    std::array<std::uint8_t, route_mac_input_size> b {};
    put(&b[0], t.job_id, 8);
    std::memcpy(&b[8], t.from.data(), fi::address_size);
    std::memcpy(&b[40], t.to.data(), fi::address_size);
    std::memcpy(&b[72], t.connector_nonce.data(), nonce_size);
    std::memcpy(&b[88], t.relay_nonce.data(), nonce_size);
    return b;
}

const char* route_status_name(route_status s) noexcept
{
    switch (s) {
    case route_status::ok:
        return "ok";
    case route_status::refused:
        return "refused";
    case route_status::unreachable:
        return "unreachable";
    case route_status::no_trunk:
        return "no_trunk";
    case route_status::busy:
        return "busy";
    }
    return "unknown";
}

std::array<std::uint8_t, route_request_size> encode(const route_request& r) noexcept
{
    std::array<std::uint8_t, route_request_size> b {};
    put_magic(b.data(), request_magic);
    put(&b[8], r.job_id, 8);
    std::memcpy(&b[16], r.from.data(), fi::address_size);
    std::memcpy(&b[48], r.to.data(), fi::address_size);
    std::memcpy(&b[80], r.connector_nonce.data(), nonce_size);
    return b;
}

std::array<std::uint8_t, route_challenge_size> encode(const route_challenge& c) noexcept
{
    std::array<std::uint8_t, route_challenge_size> b {};
    put_magic(b.data(), challenge_magic);
    std::memcpy(&b[8], c.relay_nonce.data(), nonce_size);
    std::memcpy(&b[24], c.relay_mac.data(), mac_size);
    return b;
}

std::array<std::uint8_t, route_proof_size> encode(const route_proof& p) noexcept
{
    std::array<std::uint8_t, route_proof_size> b {};
    put_magic(b.data(), proof_magic);
    std::memcpy(&b[8], p.rank_mac.data(), mac_size);
    return b;
}

std::vector<std::uint8_t> encode(const route_result& r)
{
    const std::size_t n = std::min(r.reason.size(), route_reason_max);
    std::vector<std::uint8_t> b(route_result_header_size + n);
    put_magic(b.data(), result_magic);
    b[5] = static_cast<std::uint8_t>(r.status);
    put(&b[6], n, 2);
    for (std::size_t i = 0; i < n; ++i) {
        const auto c = static_cast<std::uint8_t>(r.reason[i]);
        b[route_result_header_size + i] = printable(c) ? c : '?';
    }
    return b;
}

std::array<std::uint8_t, relay_liveness_size> encode(const relay_liveness& l) noexcept
{
    std::array<std::uint8_t, relay_liveness_size> b {};
    put_magic(b.data(), liveness_magic);
    // b[5] reserved; the target's address in network byte order, as a
    // sockaddr_in holds it.
    b[6] = static_cast<std::uint8_t>(l.to_port >> 8);
    b[7] = static_cast<std::uint8_t>(l.to_port);
    b[8] = static_cast<std::uint8_t>(l.to_ipv4 >> 24);
    b[9] = static_cast<std::uint8_t>(l.to_ipv4 >> 16);
    b[10] = static_cast<std::uint8_t>(l.to_ipv4 >> 8);
    b[11] = static_cast<std::uint8_t>(l.to_ipv4);
    b[12] = static_cast<std::uint8_t>(l.to_cluster >> 8);
    b[13] = static_cast<std::uint8_t>(l.to_cluster);
    // b[14], b[15] reserved
    std::memcpy(&b[relay_liveness_header_size], l.heartbeat.data(), heartbeat_size);
    return b;
}

std::variant<route_request, decode_error> decode_route_request(const std::uint8_t* p, std::size_t len) noexcept
{
    if (auto why = check_fixed("route request", request_magic, p, len, route_request_size); !why.empty())
        return decode_error {why};
    route_request r;
    r.job_id = get(&p[8], 8);
    std::memcpy(r.from.data(), &p[16], fi::address_size);
    std::memcpy(r.to.data(), &p[48], fi::address_size);
    std::memcpy(r.connector_nonce.data(), &p[80], nonce_size);
    if (!fi::endpoint_address::decode(r.from.data(), r.from.size()))
        return decode_error {"the sender's card in the relay route request is not a valid hashi address"};
    if (!fi::endpoint_address::decode(r.to.data(), r.to.size()))
        return decode_error {"the wanted card in the relay route request is not a valid hashi address"};
    if (r.from == r.to)
        return decode_error {"the relay route request asks for the sender's own card"};
    return r;
}

std::variant<route_challenge, decode_error> decode_route_challenge(const std::uint8_t* p, std::size_t len) noexcept
{
    if (auto why = check_fixed("route challenge", challenge_magic, p, len, route_challenge_size); !why.empty())
        return decode_error {why};
    route_challenge c;
    std::memcpy(c.relay_nonce.data(), &p[8], nonce_size);
    std::memcpy(c.relay_mac.data(), &p[24], mac_size);
    return c;
}

std::variant<route_proof, decode_error> decode_route_proof(const std::uint8_t* p, std::size_t len) noexcept
{
    if (auto why = check_fixed("route proof", proof_magic, p, len, route_proof_size); !why.empty())
        return decode_error {why};
    route_proof r;
    std::memcpy(r.rank_mac.data(), &p[8], mac_size);
    return r;
}

std::variant<relay_liveness, decode_error> decode_relay_liveness(const std::uint8_t* p, std::size_t len) noexcept
{
    if (p == nullptr || len != relay_liveness_size)
        return decode_error {"relay liveness datagram of " + std::to_string(len) + " bytes, expected " +
            std::to_string(relay_liveness_size)};
    if (auto why = check_magic("liveness datagram", liveness_magic, p, len); !why.empty())
        return decode_error {why};
    if (p[5] != 0 || p[14] != 0 || p[15] != 0)
        return decode_error {"a reserved byte of the relay liveness datagram is not zero"};
    relay_liveness l;
    l.to_port = static_cast<std::uint16_t>(p[6] << 8 | p[7]);
    l.to_ipv4 = static_cast<std::uint32_t>(p[8]) << 24 | static_cast<std::uint32_t>(p[9]) << 16 |
        static_cast<std::uint32_t>(p[10]) << 8 | p[11];
    l.to_cluster = static_cast<std::uint16_t>(p[12] << 8 | p[13]);
    if (l.to_port == 0)
        return decode_error {"the relay liveness datagram names port 0"};
    if (l.to_ipv4 == 0 || l.to_ipv4 == 0xffffffffu)
        return decode_error {"the relay liveness datagram names no single host (0.0.0.0 or 255.255.255.255)"};
    std::memcpy(l.heartbeat.data(), &p[relay_liveness_header_size], heartbeat_size);
    return l;
}

std::variant<need_more, route_result, decode_error> decode_route_result(const std::uint8_t* p, std::size_t len) noexcept
{
    if (p == nullptr && len > 0)
        return decode_error {"no bytes"};
    // What is there is checked before more is asked for.
    if (len > 0) {
        if (auto why = check_magic("route result", result_magic, p, len); !why.empty())
            return decode_error {why};
    }
    if (len > 5 && p[5] > static_cast<std::uint8_t>(route_status::busy))
        return decode_error {"relay route status " + std::to_string(p[5]) + " is unknown"};
    if (len < route_result_header_size)
        return need_more {route_result_header_size};
    const std::size_t n = get(&p[6], 2);
    if (n > route_reason_max)
        return decode_error {"relay route result with a reason of " + std::to_string(n) + " bytes, at most " +
            std::to_string(route_reason_max)};
    const std::size_t total = route_result_header_size + n;
    for (std::size_t i = route_result_header_size; i < std::min(len, total); ++i)
        if (!printable(p[i]))
            return decode_error {"the reason in the relay route result has a non-printable byte"};
    if (len < total)
        return need_more {total};
    route_result r;
    r.status = static_cast<route_status>(p[5]);
    r.reason.assign(reinterpret_cast<const char*>(&p[route_result_header_size]), n);
    return r;
}

} // namespace hashi::wire
