// SPDX-License-Identifier: BSD-3-Clause
// The bytes of Hashi's relay extension to the IMPI startup (relay/README.md,
// "Relays"): how an impi-relay joins impi-server, the relay table the
// server gives every relay once the startup is complete, and the list of a
// cluster's relays the server gives that cluster's mpiexec. Pure codec, big-
// endian like the rest of the IMPI protocol; every decoder checks the size,
// the ranges and the consistency of what it reads.
#pragma once

#include "relay/impi/wire.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hashi::impi {

namespace cmd {
constexpr std::uint32_t hx_relay_join = 0x4858524A; // "HXRJ" relay -> server: RelayInfo
constexpr std::uint32_t hx_relay_table = 0x48585254; // "HXRT" server -> relay: RelayTable
constexpr std::uint32_t hx_relays = 0x4858524C; // "HXRL" server -> client: its cluster's relays
} // namespace cmd

constexpr std::uint32_t max_relays_per_cluster = 8;

// One relay: which cluster it serves, its number there (0 = the leader),
// how many relays the cluster has, where its cluster's ranks reach it (LAN)
// and where the other clusters' relays reach it (WAN). IPv4, host order.
struct RelayInfo {
    std::int32_t cluster = 0;
    std::int32_t id = 0;
    std::int32_t count = 1;
    std::uint32_t lan_ipv4 = 0;
    std::uint16_t lan_port = 0;
    std::uint32_t wan_ipv4 = 0;
    std::uint16_t wan_port = 0;
    bool operator==(const RelayInfo&) const = default;
};
inline constexpr std::size_t relay_info_size = 28;

// "relay 1 of cluster 0 (LAN 10.0.0.2:4000, WAN 198.18.0.17:4001)"
std::string describe(const RelayInfo& r);

Bytes encode_relay_info(const RelayInfo& r);
// nullopt with `error` when the payload is not one well-formed RelayInfo
// (id outside 0..count-1, count outside 1..8, a zero address or port,
// cluster outside 0..31).
std::optional<RelayInfo> decode_relay_info(ByteView payload, std::string& error);

// HXRT: the job id and every relay of the job, by cluster then id.
struct RelayTable {
    std::uint64_t job_id = 0;
    std::vector<RelayInfo> relays;
};
Bytes encode_relay_table(const RelayTable& t);
// Also rejects a table where a (cluster, id) appears twice or a cluster's
// relays disagree on their count.
std::optional<RelayTable> decode_relay_table(ByteView payload, std::string& error);

// HXRL: where this cluster's ranks reach its relays, in relay-id order
// (index = trunk number).
struct RelayAddress {
    std::uint32_t ipv4 = 0;
    std::uint16_t port = 0;
    bool operator==(const RelayAddress&) const = default;
};
Bytes encode_relay_list(const std::vector<RelayAddress>& list);
std::optional<std::vector<RelayAddress>> decode_relay_list(ByteView payload, std::string& error);
// "10.0.0.1:4000,10.0.0.2:4000": the ranks' HASHI_RELAYS.
std::string relay_list_text(const std::vector<RelayAddress>& list);

// Payload limits for wire.cpp's payload_limit.
inline constexpr std::size_t max_relay_table = 8 + 4 + std::size_t {max_clients} * max_relays_per_cluster * relay_info_size;
inline constexpr std::size_t max_relay_list = 4 + std::size_t {max_relays_per_cluster} * 8;

} // namespace hashi::impi
