// SPDX-License-Identifier: BSD-3-Clause
// The bytes of the connection handshake, and nothing else. What the
// handshake proves and how the endpoint acts on it is in
// path/handshake.cpp; the key and the MACs are in engine/job_key.*.
//
// Four frames, before any other frame on a connection:
//   connector -> acceptor   hello      the connector's address, the address it
//                                      wants, a fresh connector nonce, and
//                                      the lane: 0 for a peer's first path,
//                                      1.. for the stripe lanes of a peer
//                                      reached through several trunks
//   acceptor  -> connector  challenge  a fresh acceptor nonce, ok/duplicate,
//                                      the acceptor's MAC over both addresses,
//                                      both nonces and the status
//   connector -> acceptor   proof      the connector's MAC over the same, and
//                                      its pid and host (then its frames)
//   acceptor  -> connector  hello_ack  the acceptor's pid and host (then its
//                                      frames)
// Nothing an unauthenticated side sends or receives names the job or the
// process: pid and host travel only after the MAC that needed them checked.
//
// Every decoder checks the length, the magic with its protocol version, the
// reserved bytes and every field, and says what was wrong.
#pragma once

#include "transport/address.hpp"
#include "transport/wire/frame.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>

namespace hashi::wire {

inline constexpr std::size_t nonce_size = 16;
inline constexpr std::size_t mac_size = 32; // HMAC-SHA256
using nonce = std::array<std::uint8_t, nonce_size>;
using mac = std::array<std::uint8_t, mac_size>;

enum class hello_status : std::uint32_t {
    ok = 0,
    duplicate = 1, // both sides connected at once; the other connection wins
};

// A peer is reached over at most this many paths at once: lane 0 (every
// peer's) and, through relays, one stripe lane per further trunk (at most
// 8 relays per cluster, HASHI_RELAYS).
inline constexpr std::size_t max_lanes = 8;

struct hello {
    fi::endpoint_address::bytes from {}; // the connector's own address
    fi::endpoint_address::bytes to {}; // the address it wants
    nonce connector_nonce {};
    std::uint8_t lane = 0; // below max_lanes
};

struct challenge {
    nonce acceptor_nonce {};
    hello_status status = hello_status::ok;
    mac acceptor_mac {};
};

// The part of proof and hello_ack that names the process, for messages.
struct identity {
    std::uint32_t pid = 0;
    std::string host; // at most host_name_size - 1 printable bytes
};

struct proof {
    mac connector_mac {};
    identity who;
};

struct hello_ack {
    identity who;
};

inline constexpr std::size_t host_name_size = 64;
inline constexpr std::size_t magic_size = 8;
inline constexpr std::size_t hello_size = magic_size + 32 + 32 + nonce_size + 8; // lane, 7 reserved
inline constexpr std::size_t challenge_size = magic_size + nonce_size + 4 + 4 + mac_size;
inline constexpr std::size_t identity_size = 4 + 4 + host_name_size;
inline constexpr std::size_t proof_size = magic_size + mac_size + identity_size;
inline constexpr std::size_t hello_ack_size = magic_size + identity_size;

// Payload size of a handshake frame type, 0 for any other type.
std::size_t handshake_payload_size(frame_type t) noexcept;

std::array<std::uint8_t, hello_size> encode(const hello& h) noexcept;
std::array<std::uint8_t, challenge_size> encode(const challenge& c) noexcept;
std::array<std::uint8_t, proof_size> encode(const proof& p) noexcept;
std::array<std::uint8_t, hello_ack_size> encode(const hello_ack& a) noexcept;

std::variant<hello, decode_error> decode_hello(const std::uint8_t* p, std::size_t len) noexcept;
std::variant<challenge, decode_error> decode_challenge(const std::uint8_t* p, std::size_t len) noexcept;
std::variant<proof, decode_error> decode_proof(const std::uint8_t* p, std::size_t len) noexcept;
std::variant<hello_ack, decode_error> decode_hello_ack(const std::uint8_t* p, std::size_t len) noexcept;

} // namespace hashi::wire
