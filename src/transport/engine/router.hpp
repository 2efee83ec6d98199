// SPDX-License-Identifier: BSD-3-Clause
// The router: the one place that decides how a peer is reached.
//
// route_for(peer) answers where to connect and whether the traffic crosses
// the WAN (other cluster: WAN pacing and, on request, protection apply).
// path_for(peer) picks the established path a frame leaves on. Today every
// peer is reached directly at its card's address over one path; relays
// (issue "Relays") answer "through the local relay set" here, and trunks
// add several paths that path_for() spreads frames over, with the
// receiver's reorder stage putting them back in order.
#pragma once

#include "transport/address.hpp"

#include <cstdint>

namespace hashi::fi {

struct peer;
class path;

struct route {
    enum class kind : std::uint8_t { self, direct };
    kind how = kind::direct;
    std::uint32_t ipv4 = 0; // where to connect (host order)
    std::uint16_t port = 0;
    bool wan = false; // the peer is in another cluster
};

class router {
public:
    explicit router(const endpoint_address& self) : self_(self) {}
    route route_for(const peer& p) const noexcept;
    // The path to write the next frames to, or null when none is open.
    path* path_for(const peer& p) const noexcept;
    bool crosses_wan(const peer& p) const noexcept;

private:
    endpoint_address self_;
};

} // namespace hashi::fi
