// SPDX-License-Identifier: BSD-3-Clause
#include "transport/engine/log_limiter.hpp"

#include "transport/common.hpp"

#include <ctime>

namespace hashi::fi {

std::uint64_t monotonic_ns() noexcept
{
    timespec ts {};
    ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

void log_limiter::warn(const char* fmt, ...)
{
    ++total_;
    const std::uint64_t now = monotonic_ns();
    if (now >= window_end_ns_) {
        window_end_ns_ = now + interval_ns_;
        in_window_ = 0;
    }
    if (in_window_ >= burst_) {
        ++held_back_;
        return;
    }
    ++in_window_;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (held_back_ > 0)
        log_warn("%s (and %llu more like it since the last such message)", line,
            static_cast<unsigned long long>(held_back_));
    else
        log_warn("%s", line);
    held_back_ = 0;
}

} // namespace hashi::fi
