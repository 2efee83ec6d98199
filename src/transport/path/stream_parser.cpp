// SPDX-License-Identifier: BSD-3-Clause
// The frame cutter of a path's byte stream (stream_parser.hpp).
#include "transport/path/stream_parser.hpp"

#include <variant>

namespace hashi::fi {

bool inline_payload(const wire::frame_header& h) noexcept
{
    return wire::is_handshake(h.type) || h.type == wire::frame_type::msg || h.type == wire::frame_type::tagged ||
        h.length == 0;
}

parsed_frame parse_frame(const std::uint8_t* bytes, std::size_t available, bool all_inline)
{
    parsed_frame r;
    if (available < wire::header_size)
        return r;
    auto decoded = wire::decode_header(bytes);
    if (auto* e = std::get_if<wire::decode_error>(&decoded)) {
        r.st = parsed_frame::status::error;
        r.error = "malformed frame: " + e->reason;
        return r;
    }
    r.h = std::get<wire::frame_header>(decoded);
    r.direct = !all_inline && !inline_payload(r.h);
    r.need = wire::header_size + (r.direct ? 0 : r.h.length);
    r.st = parsed_frame::status::frame;
    return r;
}

} // namespace hashi::fi
