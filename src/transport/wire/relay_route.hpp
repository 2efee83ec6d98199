// SPDX-License-Identifier: BSD-3-Clause
// The bytes a rank and its local impi-relay exchange, and nothing else: the
// route handshake that turns a TCP connection to the relay into a byte pipe
// to another cluster's endpoint, and the envelope a liveness ping travels
// in to the relay. What the rank does with them is in path/relay_dial.cpp
// and engine/liveness.cpp; the MACs' key is engine/job_key.hpp's.
//
// A pure codec, shared with the relay daemon (relay/relay): it depends on
// wire/*, address.hpp and the standard library only, and touches no socket.
//
// Route handshake (integers little-endian, cards are endpoint_address::bytes):
//   rank  -> relay  route_request    96  "HRRQ" | ver 1 | 3 zero | job_id u64 |
//                                        from card | to card | Nc (16)
//   relay -> rank   route_challenge  56  "HRCH" | ver 1 | 3 zero | Nr (16) |
//                                        MAC_relay (32)
//   rank  -> relay  route_proof      40  "HRPF" | ver 1 | 3 zero | MAC_rank (32)
//   relay -> rank   route_result  8 + n  "HRRS" | ver 1 | status u8 | n u16 |
//                                        n bytes of printable ASCII reason
// Both MACs are over route_mac_input() (job_id || from || to || Nc || Nr)
// under different labels, so a reflected or recorded MAC never passes. After
// `route_result ok` every byte on the connection is the destination's: the
// rank's ordinary connection handshake (wire/handshake.hpp) follows.
//
// Liveness envelope (UDP, rank -> relay, 88 bytes):
//   "HRLV" | ver 1 | 1 zero | to port u16 BIG-endian | to IPv4 u32
//   BIG-endian | to cluster u16 BIG-endian | 2 zero | the 72-byte heartbeat
//   datagram (wire/heartbeat.hpp) as it would be sent to that target. The
//   cluster lets the relay carry a ping to a peer it has no stream with yet
//   (a rank waits on a peer that has not connected); the target's pong comes
//   back unchanged, from the relay's address.
//
// Every decoder checks the length, the magic, the version, the reserved
// bytes and every field, and says what was wrong.
#pragma once

#include "transport/address.hpp"
#include "transport/wire/frame.hpp" // decode_error
#include "transport/wire/handshake.hpp" // nonce, mac
#include "transport/wire/heartbeat.hpp" // heartbeat_size

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace hashi::wire {

inline constexpr std::uint8_t relay_route_version = 1;
inline constexpr std::size_t route_request_size = 96;
inline constexpr std::size_t route_challenge_size = 56;
inline constexpr std::size_t route_proof_size = 40;
inline constexpr std::size_t route_result_header_size = 8;
inline constexpr std::size_t route_reason_max = 200;
inline constexpr std::size_t route_result_max_size = route_result_header_size + route_reason_max;
inline constexpr std::size_t relay_liveness_header_size = 16;
inline constexpr std::size_t relay_liveness_size = relay_liveness_header_size + heartbeat_size; // 88

// The labels of the two MACs (job_key::sign's label argument).
inline constexpr std::string_view route_relay_mac_label = "hashi relay route v1 relay";
inline constexpr std::string_view route_rank_mac_label = "hashi relay route v1 rank";

struct route_request {
    std::uint64_t job_id = 0;
    fi::endpoint_address::bytes from {}; // the rank's own card
    fi::endpoint_address::bytes to {}; // the card of the endpoint it wants
    nonce connector_nonce {}; // Nc
};

struct route_challenge {
    nonce relay_nonce {}; // Nr
    mac relay_mac {};
};

struct route_proof {
    mac rank_mac {};
};

enum class route_status : std::uint8_t {
    ok = 0,
    refused = 1,
    unreachable = 2, // the remote relay could not connect to the destination
    no_trunk = 3, // no relay link to the destination's cluster
    busy = 4, // the relay's limits are reached
};

struct route_result {
    route_status status = route_status::ok;
    std::string reason; // at most route_reason_max printable ASCII bytes (0x20..0x7e)
    // Bytes of the encoded message.
    std::size_t encoded_size() const noexcept { return route_result_header_size + reason.size(); }
};

struct relay_liveness {
    std::uint32_t to_ipv4 = 0; // the target's card address (host order)
    std::uint16_t to_port = 0;
    std::uint16_t to_cluster = 0; // the target card's cluster id
    heartbeat_bytes heartbeat {}; // forwarded unchanged; its MAC is checked by whoever trusts it
};

// What both route MACs cover: the request's fields and the relay's nonce.
struct route_transcript {
    std::uint64_t job_id = 0;
    fi::endpoint_address::bytes from {};
    fi::endpoint_address::bytes to {};
    nonce connector_nonce {};
    nonce relay_nonce {};
};
inline constexpr std::size_t route_mac_input_size = 8 + 2 * fi::address_size + 2 * nonce_size; // 104
// job_id (8, LE) || from (32) || to (32) || Nc (16) || Nr (16).
std::array<std::uint8_t, route_mac_input_size> route_mac_input(const route_transcript& t) noexcept;

// "ok", "refused", "unreachable", "no_trunk", "busy" ("unknown" otherwise).
const char* route_status_name(route_status s) noexcept;

std::array<std::uint8_t, route_request_size> encode(const route_request& r) noexcept;
std::array<std::uint8_t, route_challenge_size> encode(const route_challenge& c) noexcept;
std::array<std::uint8_t, route_proof_size> encode(const route_proof& p) noexcept;
// The reason is cut to route_reason_max bytes and every byte outside
// 0x20..0x7e becomes '?', so what is encoded always decodes.
std::vector<std::uint8_t> encode(const route_result& r);
std::array<std::uint8_t, relay_liveness_size> encode(const relay_liveness& l) noexcept;

// The fixed-size messages: `len` must be exactly their size.
std::variant<route_request, decode_error> decode_route_request(const std::uint8_t* p, std::size_t len) noexcept;
std::variant<route_challenge, decode_error> decode_route_challenge(const std::uint8_t* p, std::size_t len) noexcept;
std::variant<route_proof, decode_error> decode_route_proof(const std::uint8_t* p, std::size_t len) noexcept;
std::variant<relay_liveness, decode_error> decode_relay_liveness(const std::uint8_t* p, std::size_t len) noexcept;

// route_result has a length field, so it is decoded from a prefix of the
// stream: `need_more` says how many bytes (in all, from p) the message needs
// at least when `len` is short of that; what was already there is checked
// first, so junk is refused as soon as it arrives. Bytes after the message
// (p + result.encoded_size() on) are not its own and are not looked at.
struct need_more {
    std::size_t bytes = 0;
};
std::variant<need_more, route_result, decode_error> decode_route_result(const std::uint8_t* p, std::size_t len) noexcept;

} // namespace hashi::wire
