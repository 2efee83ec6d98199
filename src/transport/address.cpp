// SPDX-License-Identifier: BSD-3-Clause
#include "transport/address.hpp"

#include <arpa/inet.h>

#include <cstring>

namespace hashi::fi {

namespace {
void put16(std::uint8_t* p, std::uint16_t v) noexcept
{
    p[0] = static_cast<std::uint8_t>(v >> 8);
    p[1] = static_cast<std::uint8_t>(v);
}
void put32(std::uint8_t* p, std::uint32_t v) noexcept
{
    put16(p, static_cast<std::uint16_t>(v >> 16));
    put16(p + 2, static_cast<std::uint16_t>(v));
}
void put64(std::uint8_t* p, std::uint64_t v) noexcept
{
    put32(p, static_cast<std::uint32_t>(v >> 32));
    put32(p + 4, static_cast<std::uint32_t>(v));
}
std::uint16_t get16(const std::uint8_t* p) noexcept
{
    return static_cast<std::uint16_t>(p[0] << 8 | p[1]);
}
std::uint32_t get32(const std::uint8_t* p) noexcept
{
    return static_cast<std::uint32_t>(get16(p)) << 16 | get16(p + 2);
}
std::uint64_t get64(const std::uint8_t* p) noexcept
{
    return static_cast<std::uint64_t>(get32(p)) << 32 | get32(p + 4);
}
} // namespace

endpoint_address::bytes endpoint_address::encode() const noexcept
{
    bytes b {};
    b[0] = 'H';
    b[1] = 'A';
    b[2] = address_format_version;
    b[3] = via_relay ? 1 : 0;
    put16(&b[4], cluster_id);
    put16(&b[6], port);
    put32(&b[8], ipv4);
    put64(&b[12], nonce);
    put32(&b[20], relay_ipv4);
    put16(&b[24], relay_port);
    return b;
}

std::optional<endpoint_address> endpoint_address::decode(const void* p, std::size_t len) noexcept
{
    if (p == nullptr || len < address_size)
        return std::nullopt;
    const auto* b = static_cast<const std::uint8_t*>(p);
    if (b[0] != 'H' || b[1] != 'A' || b[2] != address_format_version || (b[3] & ~1u) != 0)
        return std::nullopt;
    for (std::size_t i = 26; i < address_size; ++i)
        if (b[i] != 0)
            return std::nullopt;
    endpoint_address a;
    a.via_relay = b[3] & 1;
    a.cluster_id = get16(&b[4]);
    a.port = get16(&b[6]);
    a.ipv4 = get32(&b[8]);
    a.nonce = get64(&b[12]);
    a.relay_ipv4 = get32(&b[20]);
    a.relay_port = get16(&b[24]);
    if (a.port == 0)
        return std::nullopt;
    return a;
}

std::string endpoint_address::describe() const
{
    char ip[INET_ADDRSTRLEN] = "?";
    in_addr in {};
    in.s_addr = htonl(ipv4);
    inet_ntop(AF_INET, &in, ip, sizeof ip);
    std::string s = std::string(ip) + ":" + std::to_string(port) + " (cluster " + std::to_string(cluster_id) + ")";
    return s;
}

} // namespace hashi::fi
