// SPDX-License-Identifier: BSD-3-Clause
#include "frame_queue.hpp"

#include <cstring>

namespace hashi::delayline {

// The ring is left uninitialised: its pages are touched only when a backlog
// needs them (a std::vector would zero, and so commit, all of it up front).
FrameQueue::FrameQueue(std::size_t capacity_bytes)
    : capacity_(capacity_bytes),
      ring_(std::make_unique_for_overwrite<std::byte[]>(capacity_bytes)) // NOLINT(*-avoid-c-arrays)
{
}

std::size_t FrameQueue::record_size(std::size_t len) noexcept
{
    // Records stay 8-byte aligned so every header starts on a boundary.
    return sizeof(Record) + ((len + 7) & ~std::size_t {7});
}

FrameQueue::Record FrameQueue::record_at(std::size_t offset) const noexcept
{
    Record r {};
    std::memcpy(&r, ring_.get() + offset, sizeof r);
    return r;
}

void FrameQueue::write_at(std::size_t offset, std::span<const std::byte> frame, std::int64_t due_ns) noexcept
{
    const Record r {due_ns, static_cast<std::uint32_t>(frame.size()), 0};
    std::memcpy(ring_.get() + offset, &r, sizeof r);
    std::memcpy(ring_.get() + offset + sizeof r, frame.data(), frame.size());
}

bool FrameQueue::push(std::span<const std::byte> frame, std::int64_t due_ns)
{
    const std::size_t need = record_size(frame.size());
    if (!wrapped_) {
        if (capacity_ - tail_ >= need) {
            write_at(tail_, frame, due_ns);
            tail_ += need;
        } else if (head_ >= need) {
            // Not enough room at the end: the rest of the ring after end_
            // is skipped and writing continues at the start.
            end_ = tail_;
            wrapped_ = true;
            write_at(0, frame, due_ns);
            tail_ = need;
        } else {
            return false;
        }
    } else if (head_ - tail_ >= need) {
        write_at(tail_, frame, due_ns);
        tail_ += need;
    } else {
        return false;
    }
    ++frames_;
    payload_bytes_ += frame.size();
    return true;
}

std::int64_t FrameQueue::front_due() const noexcept
{
    return record_at(head_).due_ns;
}

std::span<const std::byte> FrameQueue::front() const noexcept
{
    const Record r = record_at(head_);
    return {ring_.get() + head_ + sizeof(Record), r.len};
}

void FrameQueue::pop() noexcept
{
    const Record r = record_at(head_);
    head_ += record_size(r.len);
    --frames_;
    payload_bytes_ -= r.len;
    if (wrapped_ && head_ == end_) {
        head_ = 0;
        wrapped_ = false;
    }
    if (!wrapped_ && head_ == tail_) {
        // Empty: start again at offset 0, where the most contiguous room is.
        head_ = 0;
        tail_ = 0;
    }
}

} // namespace hashi::delayline
