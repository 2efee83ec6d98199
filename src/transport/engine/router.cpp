// SPDX-License-Identifier: BSD-3-Clause
// Route decisions (router.hpp).
#include "transport/engine/router.hpp"

#include "transport/engine/peer_table.hpp"

#include <algorithm>

namespace hashi::fi {

bool router::sends_into_wan(const endpoint_address& a) const noexcept
{
    // route_to's test for a relayed route, without its trunk hash: this is
    // asked on every write.
    return a.cluster_id != self_.cluster_id && !a.via_relay && !self_.via_relay;
}

std::size_t router::trunk_of(
    const endpoint_address::bytes& a, const endpoint_address::bytes& b, std::size_t trunks) noexcept
{
    // FNV-1a (64 bit) over the smaller card, then the larger: both sides
    // hash the same bytes. The cards' nonces are random, so pairs spread.
    const auto& lo = std::min(a, b);
    const auto& hi = std::max(a, b);
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (const auto* card : {&lo, &hi})
        for (std::uint8_t c : *card) {
            h ^= c;
            h *= 0x100000001b3ull;
        }
    return trunks == 0 ? 0 : static_cast<std::size_t>(h % trunks);
}

route router::route_to(const endpoint_address& a, std::uint8_t lane) const noexcept
{
    route r;
    r.wan = a.cluster_id != self_.cluster_id;
    if (r.wan && (a.via_relay || self_.via_relay)) {
        if (relays_.empty()) {
            r.how = route::kind::unreachable;
            return r;
        }
        const std::size_t t = (trunk_of(self_key_, a.encode(), relays_.size()) + lane) % relays_.size();
        r.how = route::kind::relay;
        r.trunk = static_cast<std::uint8_t>(t);
        r.ipv4 = relays_[t].ipv4;
        r.port = relays_[t].port;
        return r;
    }
    r.how = route::kind::direct;
    r.ipv4 = a.ipv4;
    r.port = a.port;
    return r;
}

route router::route_for(const peer& p, std::uint8_t lane) const noexcept
{
    if (p.is_self) {
        route r;
        r.how = route::kind::self;
        return r;
    }
    return route_to(p.addr, lane);
}

std::size_t router::lanes(const peer& p) const noexcept
{
    if (p.is_self || route_to(p.addr).how != route::kind::relay)
        return 1;
    return relays_.size();
}

std::string router::note(const endpoint_address& a) const
{
    if (a.encode() == self_key_)
        return {};
    const route r = route_to(a);
    if (r.how != route::kind::relay)
        return {};
    return via(a, r.trunk);
}

std::string router::via(const endpoint_address& a, std::size_t trunk) const
{
    // Both relays of the trunk and the link between them: when a relayed
    // path breaks, any of the three may be what is gone, and the message
    // is the one a user reads first (often before impi-server's word).
    return "via relay " + std::to_string(trunk) + " of cluster " + std::to_string(self_.cluster_id) + " (" +
        relays_[trunk].describe() + ") and its trunk to relay " + std::to_string(trunk) + " of cluster " +
        std::to_string(a.cluster_id);
}

std::string router::unreachable_reason(const endpoint_address& a)
{
    return "it is in cluster " + std::to_string(a.cluster_id) +
        ", behind impi-relay gateways (its address says so), but this process has no relay to reach it through (" +
        relays_variable + " is not set): start the ranks with Hashi's mpiexec, which sets " + relays_variable +
        " for the ranks of a cluster behind impi-relay";
}

path* router::path_for(const peer& p) const noexcept
{
    return p.lane_path(0);
}

} // namespace hashi::fi
