// SPDX-License-Identifier: BSD-3-Clause
#include "relay/impi/relay_tables.hpp"

#include <arpa/inet.h>

#include <set>
#include <utility>

namespace hashi::impi {

namespace {

std::string ipv4_text(std::uint32_t a)
{
    const std::uint32_t n = htonl(a);
    char buf[INET_ADDRSTRLEN] = "?";
    ::inet_ntop(AF_INET, &n, buf, sizeof buf);
    return buf;
}

std::string endpoint_text(std::uint32_t a, std::uint16_t port)
{
    return ipv4_text(a) + ":" + std::to_string(port);
}

void put_info(Writer& w, const RelayInfo& r)
{
    w.i32(r.cluster).i32(r.id).i32(r.count).u32(r.lan_ipv4).u32(r.lan_port).u32(r.wan_ipv4).u32(r.wan_port);
}

std::optional<RelayInfo> get_info(Reader& in, std::string& error)
{
    auto cluster = in.i32();
    auto id = in.i32();
    auto count = in.i32();
    auto lan = in.u32();
    auto lan_port = in.u32();
    auto wan = in.u32();
    auto wan_port = in.u32();
    if (!wan_port) {
        error = "a relay entry is shorter than " + std::to_string(relay_info_size) + " bytes";
        return std::nullopt;
    }
    if (*cluster < 0 || static_cast<std::uint32_t>(*cluster) >= max_clients) {
        error = "relay cluster " + std::to_string(*cluster) + " is outside 0.." + std::to_string(max_clients - 1);
        return std::nullopt;
    }
    if (*count < 1 || static_cast<std::uint32_t>(*count) > max_relays_per_cluster) {
        error = "relay count " + std::to_string(*count) + " is outside 1.." + std::to_string(max_relays_per_cluster);
        return std::nullopt;
    }
    if (*id < 0 || *id >= *count) {
        error = "relay id " + std::to_string(*id) + " is outside 0.." + std::to_string(*count - 1);
        return std::nullopt;
    }
    if (*lan == 0 || *wan == 0 || *lan_port == 0 || *lan_port > 65535 || *wan_port == 0 || *wan_port > 65535) {
        error = "relay " + std::to_string(*id) + " of cluster " + std::to_string(*cluster) +
            " has a zero address or a port outside 1..65535";
        return std::nullopt;
    }
    return RelayInfo {.cluster = *cluster,
        .id = *id,
        .count = *count,
        .lan_ipv4 = *lan,
        .lan_port = static_cast<std::uint16_t>(*lan_port),
        .wan_ipv4 = *wan,
        .wan_port = static_cast<std::uint16_t>(*wan_port)};
}

} // namespace

std::string describe(const RelayInfo& r)
{
    return "relay " + std::to_string(r.id) + " of cluster " + std::to_string(r.cluster) + " (LAN " +
        endpoint_text(r.lan_ipv4, r.lan_port) + ", WAN " + endpoint_text(r.wan_ipv4, r.wan_port) + ")";
}

Bytes encode_relay_info(const RelayInfo& r)
{
    Writer w;
    put_info(w, r);
    return w.take();
}

std::optional<RelayInfo> decode_relay_info(ByteView payload, std::string& error)
{
    if (payload.size() != relay_info_size) {
        error = "HXRJ is " + std::to_string(payload.size()) + " bytes, not " + std::to_string(relay_info_size);
        return std::nullopt;
    }
    Reader in(payload);
    return get_info(in, error);
}

Bytes encode_relay_table(const RelayTable& t)
{
    Writer w;
    w.u64(t.job_id).u32(static_cast<std::uint32_t>(t.relays.size()));
    for (const auto& r : t.relays) {
        put_info(w, r);
    }
    return w.take();
}

std::optional<RelayTable> decode_relay_table(ByteView payload, std::string& error)
{
    Reader in(payload);
    auto job = in.u64();
    auto n = in.u32();
    if (!n) {
        error = "HXRT is shorter than its 12-byte header";
        return std::nullopt;
    }
    if (*n == 0 || *n > max_clients * max_relays_per_cluster || in.remaining() != *n * relay_info_size) {
        error = "HXRT announces " + std::to_string(*n) + " relays but carries " + std::to_string(in.remaining()) +
            " bytes of entries";
        return std::nullopt;
    }
    RelayTable t {.job_id = *job, .relays = {}};
    std::set<std::pair<int, int>> seen;
    for (std::uint32_t i = 0; i < *n; ++i) {
        auto r = get_info(in, error);
        if (!r) {
            return std::nullopt;
        }
        if (!seen.insert({r->cluster, r->id}).second) {
            error = "HXRT names relay " + std::to_string(r->id) + " of cluster " + std::to_string(r->cluster) + " twice";
            return std::nullopt;
        }
        for (const auto& o : t.relays) {
            if (o.cluster == r->cluster && o.count != r->count) {
                error = "HXRT's relays of cluster " + std::to_string(r->cluster) + " disagree on their number";
                return std::nullopt;
            }
        }
        t.relays.push_back(*r);
    }
    return t;
}

Bytes encode_relay_list(const std::vector<RelayAddress>& list)
{
    Writer w;
    w.u32(static_cast<std::uint32_t>(list.size()));
    for (const auto& a : list) {
        w.u32(a.ipv4).u32(a.port);
    }
    return w.take();
}

std::optional<std::vector<RelayAddress>> decode_relay_list(ByteView payload, std::string& error)
{
    Reader in(payload);
    auto n = in.u32();
    if (!n || *n == 0 || *n > max_relays_per_cluster || in.remaining() != *n * 8) {
        error = "HXRL is not a count from 1 to " + std::to_string(max_relays_per_cluster) + " followed by that many addresses";
        return std::nullopt;
    }
    std::vector<RelayAddress> list;
    for (std::uint32_t i = 0; i < *n; ++i) {
        auto ip = in.u32();
        auto port = in.u32();
        if (*ip == 0 || *port == 0 || *port > 65535) {
            error = "HXRL entry " + std::to_string(i) + " has a zero address or a port outside 1..65535";
            return std::nullopt;
        }
        list.push_back({*ip, static_cast<std::uint16_t>(*port)});
    }
    return list;
}

std::string relay_list_text(const std::vector<RelayAddress>& list)
{
    std::string s;
    for (const auto& a : list) {
        s += (s.empty() ? "" : ",") + endpoint_text(a.ipv4, a.port);
    }
    return s;
}

} // namespace hashi::impi
