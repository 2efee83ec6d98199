// SPDX-License-Identifier: BSD-3-Clause
// Cuts a path's byte stream into frames.
//
// Contract, in one sentence as Linux's strparser: given the bytes received
// so far, parse_frame() returns the length the reader must have in its
// buffer before it can act on the frame that starts there (header plus
// inline payload), 0 when more bytes are needed to know, or an error that
// ends the stream.
//
// A frame's payload is inline (read into the buffer with its header) for
// the handshake and for eager messages; for rendezvous data and RMA it is
// read straight into its destination afterwards ("direct"), unless the
// reader asks for everything inline (a frame that arrived ahead of its
// turn and must be held by the reorder stage). No allocation, no state:
// the o2g kernel module applies the same rules in its receive handler.
#pragma once

#include "transport/wire/frame.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace hashi::fi {

struct parsed_frame {
    enum class status : std::uint8_t { more, frame, error };
    status st = status::more;
    wire::frame_header h {};
    std::size_t need = 0; // bytes to have buffered: header, plus the payload when inline
    bool direct = false; // the payload follows, to be read into its destination
    std::string error; // st == error
};

// Whether a frame of this type carries its payload inline.
bool inline_payload(const wire::frame_header& h) noexcept;

parsed_frame parse_frame(const std::uint8_t* bytes, std::size_t available, bool all_inline);

} // namespace hashi::fi
