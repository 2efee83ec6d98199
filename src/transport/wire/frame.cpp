// SPDX-License-Identifier: BSD-3-Clause
#include "transport/wire/frame.hpp"

#include "transport/wire/byte_order.hpp"
#include "transport/wire/handshake.hpp"

#include <cstring>

namespace hashi::wire {


header_bytes encode_header(const frame_header& h) noexcept
{
    header_bytes b {};
    b[0] = static_cast<std::uint8_t>(h.type);
    b[1] = h.flags;
    // b[2..3] reserved
    put(&b[4], h.seq, 4);
    put(&b[8], h.length, 8);
    put(&b[16], h.tag, 8);
    put(&b[24], h.data, 8);
    put(&b[32], h.a, 8);
    put(&b[40], h.b, 8);
    put(&b[48], h.c, 8);
    return b;
}

const char* frame_type_name(frame_type t) noexcept
{
    switch (t) {
    case frame_type::hello:
        return "hello";
    case frame_type::hello_ack:
        return "hello_ack";
    case frame_type::msg:
        return "msg";
    case frame_type::tagged:
        return "tagged";
    case frame_type::rts:
        return "rts";
    case frame_type::cts:
        return "cts";
    case frame_type::data:
        return "data";
    case frame_type::rma_write:
        return "rma_write";
    case frame_type::rma_write_ack:
        return "rma_write_ack";
    case frame_type::rma_read_req:
        return "rma_read_req";
    case frame_type::rma_read_resp:
        return "rma_read_resp";
    case frame_type::bye:
        return "bye";
    case frame_type::challenge:
        return "challenge";
    case frame_type::proof:
        return "proof";
    }
    return "unknown";
}

std::variant<frame_header, decode_error> decode_header(const std::uint8_t* p) noexcept
{
    frame_header h;
    const std::uint8_t type = p[0];
    if (type < static_cast<std::uint8_t>(frame_type::hello) || type > static_cast<std::uint8_t>(frame_type::proof))
        return decode_error {"unknown frame type " + std::to_string(type)};
    h.type = static_cast<frame_type>(type);
    h.flags = p[1];
    if (p[2] != 0 || p[3] != 0)
        return decode_error {
            std::string("reserved header bytes are not zero in a ") + frame_type_name(h.type) + " frame"};
    h.seq = static_cast<std::uint32_t>(get(&p[4], 4));
    h.length = get(&p[8], 8);
    h.tag = get(&p[16], 8);
    h.data = get(&p[24], 8);
    h.a = get(&p[32], 8);
    h.b = get(&p[40], 8);
    h.c = get(&p[48], 8);

    std::uint8_t allowed_flags = 0;
    std::uint64_t max_length = 0;
    std::uint64_t min_length = 0;
    switch (h.type) {
    case frame_type::hello:
    case frame_type::hello_ack:
    case frame_type::challenge:
    case frame_type::proof:
        min_length = max_length = handshake_payload_size(h.type);
        break;
    case frame_type::msg:
    case frame_type::tagged:
        allowed_flags = flag_remote_data;
        max_length = max_eager_payload;
        break;
    case frame_type::rts:
        allowed_flags = flag_remote_data | flag_tagged;
        break;
    case frame_type::data:
    case frame_type::rma_write:
    case frame_type::rma_read_resp:
        max_length = max_chunk_payload;
        break;
    case frame_type::cts:
    case frame_type::rma_write_ack:
    case frame_type::rma_read_req:
    case frame_type::bye:
        break;
    }
    if ((h.flags & ~allowed_flags) != 0)
        return decode_error {
            "flags 0x" + std::to_string(h.flags) + " are not valid in a " + frame_type_name(h.type) + " frame"};
    if (h.length < min_length || h.length > max_length)
        return decode_error {std::string(frame_type_name(h.type)) + " frame with " + std::to_string(h.length) +
            " payload bytes (allowed " + std::to_string(min_length) + " to " + std::to_string(max_length) + ")"};
    return h;
}

} // namespace hashi::wire
