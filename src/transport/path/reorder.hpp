// SPDX-License-Identifier: BSD-3-Clause
// The reorder stage of one peer: restores the per-(source, destination)
// sequence order of frames before matching, when they come over several
// paths (trunks through relays).
//
// Contract: offer() says whether a frame is next in sequence (deliver it
// now, then call delivered()), ahead of its turn (hold() a copy), beyond
// what the stage may hold (full: the path stops reading and TCP pushes
// back; offer it again once the gap fills), or behind (already seen: a
// protocol error that ends the stream). take_next() hands back held frames
// that became next, in order. Numbers are 32-bit and wrap; a frame more
// than max_ahead numbers ahead is an error too.
//
// With one path per peer (every peer today) every frame is next and
// nothing is copied. Progress thread only.
#pragma once

#include "transport/wire/frame.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace hashi::fi {

class reorder_stage {
public:
    enum class verdict : std::uint8_t { deliver, hold, full, behind, too_far };
    static constexpr std::uint32_t max_ahead = 1u << 20;

    struct held_frame {
        wire::frame_header h;
        std::vector<std::uint8_t> payload;
    };

    explicit reorder_stage(std::size_t cap_bytes, std::uint32_t first = 1) : cap_(cap_bytes), expected_(first) {}

    verdict offer(std::uint32_t seq, std::size_t bytes) const noexcept;
    void delivered() noexcept { ++expected_; }
    // The frames before `seq` were delivered elsewhere, in order (by the
    // o2g module, over this peer's one connection): expect `seq` next.
    void resync(std::uint32_t seq) noexcept { expected_ = seq; }
    // Keeps a frame that offer() said to hold.
    void hold(const wire::frame_header& h, const std::uint8_t* payload, std::size_t len);
    // The held frame that is next now, removed from the stage.
    std::optional<held_frame> take_next();

    std::uint32_t expected() const noexcept { return expected_; }
    std::size_t held_bytes() const noexcept { return held_bytes_; }
    std::size_t held_frames() const noexcept { return held_.size(); }

private:
    std::size_t cap_;
    std::uint32_t expected_;
    std::size_t held_bytes_ = 0;
    std::map<std::uint32_t, held_frame> held_; // by sequence number
};

} // namespace hashi::fi
