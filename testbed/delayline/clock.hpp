// SPDX-License-Identifier: BSD-3-Clause
// The one clock of the delay line: monotonic, in nanoseconds.
#pragma once

#include <cstdint>
#include <time.h>

namespace hashi::delayline {

inline std::int64_t now_ns() noexcept
{
    timespec t {};
    ::clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

} // namespace hashi::delayline
