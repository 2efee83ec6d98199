// SPDX-License-Identifier: BSD-3-Clause
// The router: the one place that decides how a peer is reached.
//
// route_for(peer) answers where to connect and whether the traffic crosses
// the WAN (other cluster: protection applies); sends_into_wan(address)
// whether this process's own socket does (WAN pacing applies).
// path_for(peer) picks the established path a frame leaves on.
//
// A peer in the same cluster, or in another one when neither side sits
// behind relays, is reached directly at its card's address. A peer in
// another cluster when either side is behind relays (the card's via_relay
// flag) is reached through a local relay (HASHI_RELAYS, engine/relay_set.hpp):
// the path is made to that relay, which after the route handshake
// (path/relay_dial.cpp) forwards bytes unread. Which relay: the trunk
// trunk_of(both cards), the same number on both sides, so that both
// directions of a pair take the same relay pair. A relayed peer is still a
// WAN peer: protection applies end to end. Pacing applies where the bytes
// enter the WAN (sends_into_wan): for a relayed peer that is the relays'
// trunk, which impi-relay --wan-rate paces, not the process's socket to its
// relay on the LAN.
//
// Striping: a relayed peer may have a path per trunk (lanes(), one lane
// per local relay). Lane 0 is the pair's trunk above and carries every
// frame; lane k goes through trunk (trunk_of + k) mod relays and carries
// chunks of large transfers only (engine::flush); the per-(source,
// destination) sequence numbers and the receiver's reorder stage put them
// back in order before matching.
#pragma once

#include "transport/address.hpp"
#include "transport/engine/relay_set.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hashi::fi {

struct peer;
class path;

struct route {
    enum class kind : std::uint8_t {
        self,
        direct,
        relay, // connect to the local relay of `trunk`, which forwards to the peer
        unreachable, // the peer is behind relays and this process has none
    };
    kind how = kind::direct;
    std::uint32_t ipv4 = 0; // where to connect (host order): the peer, or the relay
    std::uint16_t port = 0;
    std::uint8_t trunk = 0; // kind::relay: the relay's number in HASHI_RELAYS
    bool wan = false; // the peer is in another cluster
};

class router {
public:
    explicit router(const endpoint_address& self, std::vector<relay_endpoint> relays = {})
        : self_(self), relays_(std::move(relays))
    {
    }
    route route_for(const peer& p, std::uint8_t lane = 0) const noexcept;
    // The route to another endpoint at `a` (not this one), for `lane`.
    route route_to(const endpoint_address& a, std::uint8_t lane = 0) const noexcept;
    // How many paths (lanes) the peer can be reached over: the number of
    // local relays for a relayed peer, 1 otherwise.
    std::size_t lanes(const peer& p) const noexcept;
    // The path to write the next frames to (lane 0), or null when none is open.
    path* path_for(const peer& p) const noexcept;
    // This process's own socket to `a` crosses the WAN (another cluster,
    // reached directly): the sockets the process paces. A relayed peer's
    // bytes enter the WAN from the relays' trunk, one TCP flow per gateway
    // whose relay paces it; pacing the rank's LAN socket to the relay as
    // well cost 6-20 % in bench/wan's relayed scenario, where no variant
    // dropped a packet at the bottleneck (5 Dec).
    bool sends_into_wan(const endpoint_address& a) const noexcept;
    // "via relay 1 of cluster 0 (10.0.0.1:7000) and its trunk to relay 1 of
    // cluster 1" for a relayed address (its lane 0), empty otherwise; for
    // peer::describe() and the statistics.
    std::string note(const endpoint_address& a) const;
    // The same words for the route to `a` through local relay `trunk`
    // (a stripe lane's); `trunk` below the number of relays.
    std::string via(const endpoint_address& a, std::size_t trunk) const;
    // Why `a` cannot be reached (route kind unreachable), naming what to do.
    static std::string unreachable_reason(const endpoint_address& a);

    // The trunk of the pair (a, b) among `trunks` relays: the same whichever
    // of the two asks, spread evenly over pairs. `trunks` at least 1.
    static std::size_t trunk_of(
        const endpoint_address::bytes& a, const endpoint_address::bytes& b, std::size_t trunks) noexcept;

private:
    endpoint_address self_;
    endpoint_address::bytes self_key_ = self_.encode();
    std::vector<relay_endpoint> relays_;
};

} // namespace hashi::fi
