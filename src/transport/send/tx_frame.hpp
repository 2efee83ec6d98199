// SPDX-License-Identifier: BSD-3-Clause
// A frame on its way out: the header, and the payload where it lies (the
// application's memory, or a copy the frame owns). Written by a path
// (path/path.hpp) once the send scheduler has committed it there.
#pragma once

#include "transport/engine/operations.hpp"
#include "transport/info.hpp"
#include "transport/wire/frame.hpp"

#include <sys/uio.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace hashi::fi {

struct tx_frame {
    wire::frame_header h {}; // h.seq is set when the frame is committed to a path
    wire::header_bytes hdr {}; // encoded at commit
    std::array<iovec, provider_iov_limit> iov {};
    std::uint8_t iov_count = 0;
    std::size_t sent = 0; // bytes of header plus payload written so far
    std::unique_ptr<std::uint8_t[]> owned; // payload the frame owns (inject, copies)
    op* done = nullptr; // completed once the frame is written (eager send, last chunk)
    // A chunk of a striped transfer: its operation, which counts the chunks
    // not yet written (the lanes write them in any order).
    op* chunk_of = nullptr;
    // The frame ends an entry of the send queue (every frame but the chunks
    // of a transfer before its last): the queue bound counts entries.
    bool ends_entry = true;

    std::size_t total() const noexcept { return wire::header_size + h.length; }
};

} // namespace hashi::fi
