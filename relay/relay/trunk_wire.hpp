// SPDX-License-Identifier: BSD-3-Clause
// The bytes between two impi-relays (a trunk), and nothing else.
//
// A trunk is one TCP connection over the WAN between relay (K, i) and relay
// (K', j). It starts with a handshake in the clear in which each side
// proves it holds the job's key, for exactly this pair of relays:
//   connector -> acceptor  hello      job id, both relays' names, nonce Nc
//   acceptor  -> connector challenge  nonce Na, MAC_a(job, names, Nc, Na)
//   connector -> acceptor  proof      MAC_c(job, names, Nc, Na)
// then both switch to the protected byte stream (src/transport/secure:
// integrity or TLS 1.3, keys derived from the job key and this transcript)
// and exchange frames: a 16-byte header and at most max_payload bytes.
//
// Frames multiplex the streams of many (rank, rank) pairs: `open` asks the
// other relay to connect a rank of its cluster, `opened` answers, `data`
// carries a stream's bytes within the credit the receiver granted
// (`credit`), `close` ends a stream, `ping`/`pong` keep an idle trunk
// proven alive, `heartbeat` carries a rank's liveness datagram.
//
// Layout, integers little-endian:
//   hello      "HTRH" ver(1) 0 0 0 | job u64 | from_cluster u16 from_relay u16
//              to_cluster u16 to_relay u16 | Nc (16)                 = 40 bytes
//   challenge  "HTRC" ver 0 0 0 | Na (16) | MAC_a (32)                = 56 bytes
//   proof      "HTRP" ver 0 0 0 | MAC_c (32)                          = 40 bytes
//   frame      type u8 | flags u8 (0) | reserved u16 (0) | stream u32 |
//              length u32 | aux u32 | payload                         = 16 + length
// Every decoder checks the size, the magic, the version, reserved bytes and
// each field, and says what was wrong.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace hashi::relay {

inline constexpr std::uint8_t trunk_version = 1;
inline constexpr std::size_t trunk_nonce_size = 16;
inline constexpr std::size_t trunk_mac_size = 32;
using trunk_nonce = std::array<std::uint8_t, trunk_nonce_size>;
using trunk_mac = std::array<std::uint8_t, trunk_mac_size>;

struct wire_error {
    std::string reason;
};

struct relay_name {
    std::uint16_t cluster = 0;
    std::uint16_t relay = 0;
    bool operator==(const relay_name&) const = default;
    auto operator<=>(const relay_name&) const = default;
};
std::string to_string(const relay_name& n); // "relay 1 of cluster 0"

struct trunk_hello {
    std::uint64_t job_id = 0;
    relay_name from;
    relay_name to;
    trunk_nonce connector_nonce {};
};
struct trunk_challenge {
    trunk_nonce acceptor_nonce {};
    trunk_mac acceptor_mac {};
};
struct trunk_proof {
    trunk_mac connector_mac {};
};
inline constexpr std::size_t trunk_hello_size = 40;
inline constexpr std::size_t trunk_challenge_size = 56;
inline constexpr std::size_t trunk_proof_size = 40;

std::vector<std::uint8_t> encode(const trunk_hello& h);
std::vector<std::uint8_t> encode(const trunk_challenge& c);
std::vector<std::uint8_t> encode(const trunk_proof& p);
std::variant<trunk_hello, wire_error> decode_trunk_hello(const std::uint8_t* p, std::size_t n);
std::variant<trunk_challenge, wire_error> decode_trunk_challenge(const std::uint8_t* p, std::size_t n);
std::variant<trunk_proof, wire_error> decode_trunk_proof(const std::uint8_t* p, std::size_t n);

// What both MACs and the stream's keys are bound to: job id, both names
// and both nonces, fixed-length fields in a fixed order.
std::vector<std::uint8_t> trunk_transcript(const trunk_hello& h, const trunk_nonce& acceptor_nonce);

enum class frame_kind : std::uint8_t {
    open = 1, // payload: from card (32) | to card (32); stream chosen by the opener
    opened = 2, // aux: route status (0 ok); payload: reason text
    data = 3, // payload: the stream's bytes
    credit = 4, // aux: bytes the receiver took out of its buffer
    close = 5, // aux: 0 orderly end, else an error; payload: reason text
    ping = 6, // aux: a counter, echoed in the pong
    pong = 7,
    heartbeat = 8, // payload: heartbeat_route (12) | liveness datagram (72); aux 0 towards the target, 1 back
};
const char* kind_name(frame_kind k) noexcept;

inline constexpr std::size_t frame_header_size = 16;
inline constexpr std::uint32_t max_payload = 64 * 1024;
inline constexpr std::size_t max_reason = 200;

struct frame_header {
    frame_kind kind = frame_kind::data;
    std::uint32_t stream = 0;
    std::uint32_t length = 0;
    std::uint32_t aux = 0;
};
std::array<std::uint8_t, frame_header_size> encode(const frame_header& h);
// Checks the kind, the reserved bytes, the length against max_payload and
// against what each kind may carry (open exactly 64, credit/ping/pong 0,
// heartbeat exactly 84, texts at most max_reason).
std::variant<frame_header, wire_error> decode_frame_header(const std::uint8_t* p);

// The addresses a forwarded liveness datagram travels between: the rank
// that pings (origin, where the pong goes back to) and the rank pinged.
// IPv4 in host order; on the wire big-endian, as in a card.
struct heartbeat_route {
    std::uint32_t origin_ipv4 = 0;
    std::uint16_t origin_port = 0;
    std::uint32_t target_ipv4 = 0;
    std::uint16_t target_port = 0;
};
inline constexpr std::size_t heartbeat_route_size = 12;
inline constexpr std::size_t liveness_datagram_size = 72; // transport/wire/heartbeat.hpp
std::array<std::uint8_t, heartbeat_route_size> encode(const heartbeat_route& r);
std::variant<heartbeat_route, wire_error> decode_heartbeat_route(const std::uint8_t* p, std::size_t n);

// Printable ASCII of at most max_reason bytes, else a wire_error.
std::variant<std::string, wire_error> decode_reason(const std::uint8_t* p, std::size_t n);

} // namespace hashi::relay
