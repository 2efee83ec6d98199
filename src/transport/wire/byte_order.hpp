// SPDX-License-Identifier: BSD-3-Clause
// The byte order of every hashi frame and handshake field: little-endian,
// that of every machine Hashi targets, so encoding is a copy there; the
// shifts keep it right elsewhere.
#pragma once

#include <cstdint>

namespace hashi::wire {

inline void put(std::uint8_t* p, std::uint64_t v, int bytes) noexcept
{
    for (int i = 0; i < bytes; ++i)
        p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

inline std::uint64_t get(const std::uint8_t* p, int bytes) noexcept
{
    std::uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i)
        v = v << 8 | p[i];
    return v;
}

} // namespace hashi::wire
