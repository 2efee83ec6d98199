// SPDX-License-Identifier: BSD-3-Clause
// The frames a delay line holds, first in first out, each with the time it
// is due. They are stored back to back in one byte ring of fixed size, so
// memory is bounded by the capacity, small frames cost little, and nothing
// is allocated per frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace hashi::delayline {

class FrameQueue {
public:
    explicit FrameQueue(std::size_t capacity_bytes);

    // Copies `frame` in. False when there is no room: the caller drops the
    // frame and counts it.
    [[nodiscard]] bool push(std::span<const std::byte> frame, std::int64_t due_ns);

    [[nodiscard]] bool empty() const noexcept { return frames_ == 0; }
    [[nodiscard]] std::size_t frames() const noexcept { return frames_; }
    [[nodiscard]] std::size_t bytes() const noexcept { return payload_bytes_; }
    [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }

    // The oldest frame and its due time; only when !empty().
    [[nodiscard]] std::int64_t front_due() const noexcept;
    [[nodiscard]] std::span<const std::byte> front() const noexcept;
    void pop() noexcept;

private:
    struct Record {
        std::int64_t due_ns;
        std::uint32_t len;
        std::uint32_t unused;
    };
    [[nodiscard]] static std::size_t record_size(std::size_t len) noexcept;
    [[nodiscard]] Record record_at(std::size_t offset) const noexcept;
    void write_at(std::size_t offset, std::span<const std::byte> frame, std::int64_t due_ns) noexcept;

    // Live records are [head_, tail_), or, once the writer has wrapped,
    // [head_, end_) followed by [0, tail_).
    std::size_t capacity_;
    std::unique_ptr<std::byte[]> ring_; // NOLINT(*-avoid-c-arrays): uninitialised storage
    std::size_t head_ = 0;
    std::size_t tail_ = 0;
    std::size_t end_ = 0;
    bool wrapped_ = false;
    std::size_t frames_ = 0;
    std::size_t payload_bytes_ = 0;
};

} // namespace hashi::delayline
