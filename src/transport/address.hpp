// SPDX-License-Identifier: BSD-3-Clause
// The endpoint address MPICH exchanges as a business card: fixed size and
// byte-deterministic (MPICH compares the bytes with memcmp and packs the
// cards of all ranks with one stride).
//
// Layout (32 bytes, integers big-endian):
//   0  magic 'H' 'A'     2  format version      3  flags (bit 0: via relay)
//   4  cluster id (16)   6  TCP port (16)       8  IPv4 address
//  12  endpoint nonce (64): random per endpoint; tells a restarted process
//      on a reused port from the old one
//  20  relay IPv4 address, 24 relay port (16): where to connect when the
//      endpoint sits in a private cluster (flags bit 0); zero otherwise
//  26  reserved, zero
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace hashi::fi {

inline constexpr std::size_t address_size = 32;
inline constexpr std::uint8_t address_format_version = 1;

struct endpoint_address {
    std::uint16_t cluster_id = 0;
    std::uint32_t ipv4 = 0; // host byte order
    std::uint16_t port = 0;
    std::uint64_t nonce = 0;
    bool via_relay = false;
    std::uint32_t relay_ipv4 = 0;
    std::uint16_t relay_port = 0;

    using bytes = std::array<std::uint8_t, address_size>;
    bytes encode() const noexcept;
    // nullopt when the bytes are not a hashi address of a version we know.
    static std::optional<endpoint_address> decode(const void* p, std::size_t len) noexcept;

    // "10.1.0.2:40001 (cluster 1)" for messages.
    std::string describe() const;
    bool operator==(const endpoint_address&) const = default;
};

} // namespace hashi::fi
