// SPDX-License-Identifier: BSD-3-Clause
// Liveness datagrams: the ping an endpoint sends over UDP to a peer it waits
// on, and the pong the peer's liveness thread answers with. They travel on a
// UDP socket bound to the same port number as the endpoint's TCP listener,
// so the business card (address.hpp) says where to send them.
//
// Layout (72 bytes, integers little-endian like the frames):
//    0  magic 'H' 'S' 'H' 'B'     4  version (1)     5  kind (1 ping, 2 pong)
//    6  reserved, zero (16)
//    8  sender's endpoint nonce (64)      16  target's endpoint nonce (64)
//   24  challenge (16 bytes): fresh random in a ping, echoed in its pong
//   40  HMAC-SHA256 under the job key over bytes [0, 40)
//
// Nothing here trusts the sender: decode() checks the size, the magic, the
// version, the kind and the reserved bytes; verify() checks the MAC in
// constant time. The target nonce keeps a restarted process on a reused port
// from answering for the old one; the echoed challenge keeps a recorded pong
// from being replayed as a fresh one.
#pragma once

#include "transport/wire/frame.hpp" // decode_error

#include <array>
#include <cstddef>
#include <cstdint>
#include <variant>

namespace hashi::wire {

inline constexpr std::size_t heartbeat_size = 72;
inline constexpr std::size_t heartbeat_mac_offset = 40;
inline constexpr std::size_t ping_challenge_size = 16;
inline constexpr std::size_t job_key_size = 32;

using heartbeat_bytes = std::array<std::uint8_t, heartbeat_size>;
using ping_challenge = std::array<std::uint8_t, ping_challenge_size>;
using job_key = std::array<std::uint8_t, job_key_size>;

enum class heartbeat_kind : std::uint8_t { ping = 1, pong = 2 };

struct heartbeat {
    heartbeat_kind kind = heartbeat_kind::ping;
    std::uint64_t sender = 0; // the sending endpoint's nonce
    std::uint64_t target = 0; // the nonce of the endpoint it is meant for
    ping_challenge challenge {};
};

// The datagram, MAC included.
heartbeat_bytes encode_heartbeat(const heartbeat& h, const job_key& key) noexcept;

// The fields of a well-formed datagram of `len` bytes; the MAC is not checked.
std::variant<heartbeat, decode_error> decode_heartbeat(const std::uint8_t* p, std::size_t len) noexcept;

// True when the datagram (heartbeat_size bytes) carries a valid MAC under `key`.
bool verify_heartbeat(const std::uint8_t* p, const job_key& key) noexcept;

} // namespace hashi::wire
