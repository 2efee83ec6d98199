// SPDX-License-Identifier: BSD-3-Clause
// The decisions of send coalescing (send_coalescing.hpp has the contract
// and the why).
#include "transport/engine/send_coalescing.hpp"

#include <algorithm>

namespace hashi::fi {

bool send_coalescing::on_send(std::uint64_t now, std::uint64_t bytes, bool& release_first) noexcept
{
    release_first = false;
    if (!enabled_)
        return false;
    const bool follows = in_burst_ && now - last_send_ns_ <= gap_ns;
    in_burst_ = true;
    last_send_ns_ = now;
    if (held_ > 0 && (!follows || held_ >= hold_frames || bytes > max_message || held_bytes_ + bytes > hold_bytes ||
                         now - first_held_ns_ > max_hold_ns)) {
        release_first = true;
        release(now);
    }
    if (!follows) {
        // The first send of a burst goes at once; a backoff counts bursts.
        skipping_ = skip_ > 0;
        if (skipping_)
            --skip_;
        return false;
    }
    // A larger message gains nothing from company (max_message says why).
    if (skipping_ || bytes > max_message)
        return false;
    if (held_++ == 0)
        first_held_ns_ = now;
    last_held_ns_ = now;
    held_bytes_ += bytes;
    ++frames_held_;
    return true;
}

void send_coalescing::release(std::uint64_t now) noexcept
{
    ++releases_;
    held_ = 0;
    held_bytes_ = 0;
    if (now - last_held_ns_ > late_ns)
        ++late_; // counted only (send_coalescing.hpp says why)
}

void send_coalescing::flushed() noexcept
{
    ++flushed_;
    in_burst_ = false;
    held_ = 0;
    held_bytes_ = 0;
    backoff_ = backoff_ == 0 ? first_backoff : std::min(backoff_ * 2, max_backoff);
    skip_ = backoff_;
}

} // namespace hashi::fi
