// SPDX-License-Identifier: BSD-3-Clause
// Warnings a stranger can provoke (refused connections, a flood of them,
// accept failures when out of descriptors) go through a limiter: at most a
// few lines per second, the next one with the count of the lines it held
// back, so that junk on the network can never fill a disk or slow the job
// with its log.
#pragma once

#include <cstdint>

namespace hashi::fi {

class log_limiter {
public:
    explicit log_limiter(unsigned burst = 5, std::uint64_t interval_ns = 1'000'000'000ull)
        : burst_(burst), interval_ns_(interval_ns)
    {
    }
    // Logs a warning now, or counts it for the next line.
    void warn(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
    std::uint64_t total() const noexcept { return total_; }

private:
    unsigned burst_; // lines per interval
    std::uint64_t interval_ns_;
    std::uint64_t window_end_ns_ = 0;
    unsigned in_window_ = 0;
    std::uint64_t held_back_ = 0;
    std::uint64_t total_ = 0;
};

// CLOCK_MONOTONIC in nanoseconds (coarse: a few ms resolution, no system
// call), for deadlines and timers in the progress loop.
std::uint64_t monotonic_ns() noexcept;

} // namespace hashi::fi
