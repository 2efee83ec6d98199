// SPDX-License-Identifier: BSD-3-Clause
#include "transport/wire/handshake.hpp"

#include "transport/wire/byte_order.hpp"

#include <algorithm>
#include <cstring>

namespace hashi::wire {

namespace {

// The last byte is the handshake's protocol version: 3 adds the lane to the
// hello (several paths per peer, striping over trunks); 2 was the
// authenticated handshake (version 1 sent the job id in the clear and had
// no proofs).
constexpr std::uint8_t magic[magic_size] = {'H', 'A', 'S', 'H', 'I', 'W', 'P', 3};

void put_magic(std::uint8_t* b) noexcept
{
    std::memcpy(b, magic, magic_size);
}

// Checks the length and the magic; on success returns an empty reason.
std::string check_envelope(const char* what, const std::uint8_t* p, std::size_t len, std::size_t want)
{
    if (len != want)
        return std::string(what) + " of " + std::to_string(len) + " bytes, expected " + std::to_string(want);
    if (std::memcmp(p, magic, magic_size - 1) != 0)
        return "not a hashi handshake (wrong magic): is something else connecting to this port?";
    if (p[magic_size - 1] != magic[magic_size - 1])
        return "hashi handshake version " + std::to_string(p[magic_size - 1]) + ", this library speaks " +
            std::to_string(magic[magic_size - 1]) + " (mixed Hashi installations in one job?)";
    return {};
}

void put_identity(std::uint8_t* b, const identity& who) noexcept
{
    put(b, who.pid, 4);
    // b[4..7] reserved
    std::memcpy(b + 8, who.host.data(), std::min(who.host.size(), host_name_size - 1));
}

std::string get_identity(const std::uint8_t* p, identity& who)
{
    who.pid = static_cast<std::uint32_t>(get(p, 4));
    if (get(p + 4, 4) != 0)
        return "reserved handshake bytes are not zero";
    const auto* host = reinterpret_cast<const char*>(p + 8);
    const std::size_t n = strnlen(host, host_name_size);
    if (n == host_name_size)
        return "host name in the handshake is not terminated";
    for (std::size_t i = 0; i < n; ++i)
        if (host[i] < 0x21 || host[i] > 0x7e)
            return "host name in the handshake has a non-printable byte";
    for (std::size_t i = n; i < host_name_size; ++i)
        if (host[i] != 0)
            return "bytes after the host name in the handshake are not zero";
    who.host.assign(host, n);
    return {};
}

} // namespace

std::size_t handshake_payload_size(frame_type t) noexcept
{
    switch (t) {
    case frame_type::hello:
        return hello_size;
    case frame_type::challenge:
        return challenge_size;
    case frame_type::proof:
        return proof_size;
    case frame_type::hello_ack:
        return hello_ack_size;
    default:
        return 0;
    }
}

std::array<std::uint8_t, hello_size> encode(const hello& h) noexcept
{
    std::array<std::uint8_t, hello_size> b {};
    put_magic(b.data());
    std::memcpy(&b[8], h.from.data(), 32);
    std::memcpy(&b[40], h.to.data(), 32);
    std::memcpy(&b[72], h.connector_nonce.data(), nonce_size);
    b[88] = h.lane;
    // b[89..95] reserved
    return b;
}

std::array<std::uint8_t, challenge_size> encode(const challenge& c) noexcept
{
    std::array<std::uint8_t, challenge_size> b {};
    put_magic(b.data());
    std::memcpy(&b[8], c.acceptor_nonce.data(), nonce_size);
    put(&b[24], static_cast<std::uint32_t>(c.status), 4);
    // b[28..31] reserved
    std::memcpy(&b[32], c.acceptor_mac.data(), mac_size);
    return b;
}

std::array<std::uint8_t, proof_size> encode(const proof& p) noexcept
{
    std::array<std::uint8_t, proof_size> b {};
    put_magic(b.data());
    std::memcpy(&b[8], p.connector_mac.data(), mac_size);
    put_identity(&b[40], p.who);
    return b;
}

std::array<std::uint8_t, hello_ack_size> encode(const hello_ack& a) noexcept
{
    std::array<std::uint8_t, hello_ack_size> b {};
    put_magic(b.data());
    put_identity(&b[8], a.who);
    return b;
}

std::variant<hello, decode_error> decode_hello(const std::uint8_t* p, std::size_t len) noexcept
{
    if (auto why = check_envelope("hello", p, len, hello_size); !why.empty())
        return decode_error {why};
    hello h;
    std::memcpy(h.from.data(), &p[8], 32);
    std::memcpy(h.to.data(), &p[40], 32);
    std::memcpy(h.connector_nonce.data(), &p[72], nonce_size);
    h.lane = p[88];
    if (h.lane >= max_lanes)
        return decode_error {"lane " + std::to_string(h.lane) + " in the handshake, at most " +
            std::to_string(max_lanes - 1)};
    for (std::size_t i = 89; i < hello_size; ++i)
        if (p[i] != 0)
            return decode_error {"reserved handshake bytes are not zero"};
    if (!fi::endpoint_address::decode(h.from.data(), h.from.size()))
        return decode_error {"the sender's address in the handshake is not a valid hashi address"};
    if (!fi::endpoint_address::decode(h.to.data(), h.to.size()))
        return decode_error {"the wanted address in the handshake is not a valid hashi address"};
    return h;
}

std::variant<challenge, decode_error> decode_challenge(const std::uint8_t* p, std::size_t len) noexcept
{
    if (auto why = check_envelope("challenge", p, len, challenge_size); !why.empty())
        return decode_error {why};
    challenge c;
    std::memcpy(c.acceptor_nonce.data(), &p[8], nonce_size);
    const auto status = get(&p[24], 4);
    if (status > static_cast<std::uint32_t>(hello_status::duplicate))
        return decode_error {"handshake status " + std::to_string(status) + " is unknown"};
    c.status = static_cast<hello_status>(status);
    if (get(&p[28], 4) != 0)
        return decode_error {"reserved handshake bytes are not zero"};
    std::memcpy(c.acceptor_mac.data(), &p[32], mac_size);
    return c;
}

std::variant<proof, decode_error> decode_proof(const std::uint8_t* p, std::size_t len) noexcept
{
    if (auto why = check_envelope("proof", p, len, proof_size); !why.empty())
        return decode_error {why};
    proof r;
    std::memcpy(r.connector_mac.data(), &p[8], mac_size);
    if (auto why = get_identity(&p[40], r.who); !why.empty())
        return decode_error {why};
    return r;
}

std::variant<hello_ack, decode_error> decode_hello_ack(const std::uint8_t* p, std::size_t len) noexcept
{
    if (auto why = check_envelope("hello_ack", p, len, hello_ack_size); !why.empty())
        return decode_error {why};
    hello_ack a;
    if (auto why = get_identity(&p[8], a.who); !why.empty())
        return decode_error {why};
    return a;
}

} // namespace hashi::wire
