// SPDX-License-Identifier: BSD-3-Clause
// The hashi wire protocol: every byte on a connection belongs to a frame, a
// fixed 56-byte header followed by `length` payload bytes.
//
// Frames between one (source, destination) endpoint pair carry consecutive
// sequence numbers. Today one TCP connection keeps them in order; the
// multi-trunk transport will stripe frames over several connections and use
// the numbers to restore MPI's order before matching.
//
// Nothing here trusts the peer: decode_header() checks the type, the flags,
// the reserved bits and a per-type bound on `length` before anyone acts on
// the header, and the receive path checks ids and offsets against its own
// state.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>

namespace hashi::wire {

enum class frame_type : std::uint8_t {
    hello = 1, // handshake (wire/handshake.hpp): connector's addresses and nonce
    hello_ack = 2, // handshake: the acceptor's identity, after the connector's proof
    msg = 3, // untagged message, payload inline (eager)
    tagged = 4, // tagged message, payload inline (eager)
    rts = 5, // rendezvous: request to send `a` bytes; b = sender's op id
    cts = 6, // rendezvous: clear to send; a = sender's op id, b = receiver's op id, c = bytes accepted
    data = 7, // rendezvous payload chunk; a = receiver's op id, b = offset
    rma_write = 8, // a = key, b = offset in the region, c = initiator's op id
    rma_write_ack = 9, // a = initiator's op id, c = status (0 or an FI_E* code)
    rma_read_req = 10, // a = key, b = offset, c = initiator's op id, tag = bytes wanted
    rma_read_resp = 11, // a = initiator's op id, b = offset of this chunk, c = status
    bye = 12, // the sender will send nothing more on this connection
    challenge = 13, // handshake: the acceptor's nonce and proof
    proof = 14, // handshake: the connector's proof and identity
};

// The four frame types of the handshake, which carry no sequence number.
constexpr bool is_handshake(frame_type t) noexcept
{
    return t == frame_type::hello || t == frame_type::hello_ack || t == frame_type::challenge ||
        t == frame_type::proof;
}

enum frame_flags : std::uint8_t {
    flag_remote_data = 1, // `data` carries remote CQ data
    flag_tagged = 2, // (rts) the message is tagged
};

struct frame_header {
    frame_type type {};
    std::uint8_t flags = 0;
    std::uint32_t seq = 0;
    std::uint64_t length = 0; // payload bytes after the header
    std::uint64_t tag = 0;
    std::uint64_t data = 0;
    std::uint64_t a = 0;
    std::uint64_t b = 0;
    std::uint64_t c = 0;
};

inline constexpr std::size_t header_size = 56;
// Largest eager payload a receiver accepts; senders switch to rendezvous
// well below it.
inline constexpr std::uint64_t max_eager_payload = 1u << 20;
// Largest chunk of rendezvous or RMA payload in one frame.
inline constexpr std::uint64_t max_chunk_payload = 64u << 20;

using header_bytes = std::array<std::uint8_t, header_size>;
header_bytes encode_header(const frame_header& h) noexcept;

struct decode_error {
    std::string reason;
};
std::variant<frame_header, decode_error> decode_header(const std::uint8_t* p) noexcept;

const char* frame_type_name(frame_type t) noexcept;

} // namespace hashi::wire
