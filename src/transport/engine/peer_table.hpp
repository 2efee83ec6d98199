// SPDX-License-Identifier: BSD-3-Clause
// The peer table of an endpoint: one `peer` per remote endpoint it talks
// to, found by AV index (fi_addr) or by address, and the one place a peer
// fails: fail() marks it, logs why, and tells every layer that holds
// something for it (failure listeners: the paths and send queues, the
// operations waiting on it, the receive backend's directed receives).
//
// Peers are made on first use (a send to an AV entry, a directed receive's
// liveness verdict) or when a connection from them proves itself; a
// stranger can never add one. Progress thread only.
#pragma once

#include "transport/address.hpp"
#include "transport/path/reorder.hpp"
#include "transport/send/send_scheduler.hpp"
#include "transport/tcp_telemetry.hpp"
#include "transport/wire/handshake.hpp"

#include <rdma/fabric.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace hashi::fi {

class path;

struct peer_stats {
    std::uint64_t tx_bytes = 0, tx_msgs = 0, rx_bytes = 0, rx_msgs = 0;
    std::uint64_t unexpected_now = 0, unexpected_max = 0;
    std::uint64_t rendezvous = 0, rma_ops = 0;
};

// Frames held by the reorder stage of one peer, at most (path/reorder.hpp).
inline constexpr std::size_t reorder_cap_bytes = 8u << 20;

struct peer {
    peer(const endpoint_address& a, std::size_t chunk_size)
        : addr(a), key(a.encode()), sched(chunk_size), reorder(reorder_cap_bytes)
    {
    }
    endpoint_address addr;
    endpoint_address::bytes key {};
    fi_addr_t fi_addr = FI_ADDR_NOTAVAIL; // FI_ADDR_NOTAVAIL until inserted in the AV
    bool is_self = false;
    // Established paths: lane 0, and through relays with several trunks
    // the stripe lanes (path::lane) made for large transfers. Frames go out
    // on the path the router picks (engine/router.hpp), chunks of large
    // transfers on any of them (engine::flush).
    std::vector<path*> paths;
    path* dialing = nullptr; // our own attempt at lane 0, before its handshake is done
    // Our own attempts at stripe lanes (index: lane), and lanes given up
    // (refused or broken during their handshake: not dialed again).
    std::array<path*, wire::max_lanes> lane_dialing {};
    std::array<bool, wire::max_lanes> lane_given_up {};
    bool lanes_dialed = false; // the stripe lanes were asked for once
    bool held = false; // in engine::held_peers_: send coalescing holds frames for it
    int redials = 0; // attempts whose connection was closed during the handshake
    bool redial_pending = false;
    send_scheduler sched;
    std::uint32_t tx_seq = 1; // next sequence number we send
    bool pace_wait = false; // a timer writes again when the pacer allows
    bool stripe_wait = false; // a timer looks again at backlogged stripe lanes (engine::flush)
    reorder_stage reorder; // restores the order of what it sends us
    std::string host; // from the handshake, for messages
    std::uint32_t pid = 0;
    std::string via; // "via relay A:P (trunk t)" for a peer reached through a relay (router::note)
    bool failed = false;
    std::string failure;
    peer_stats stats;
    TcpTelemetry closed_tcp; // its closed connections' last TCP_INFO (path_manager::close)
    std::vector<std::uint64_t> unexpected_cookies; // while fi_addr is unknown, for renumbering

    std::string describe() const;
    // Lane 0 is open (stripe lanes are made only after it).
    bool connected() const noexcept { return lane_path(0) != nullptr; }
    path* lane_path(std::uint8_t lane) const noexcept;
    bool lane_busy(std::uint8_t lane) const noexcept
    {
        return lane_path(lane) != nullptr || (lane == 0 ? dialing != nullptr : lane_dialing[lane] != nullptr);
    }
};

class peer_failure_listener {
public:
    virtual void peer_failed(peer& p) = 0;

protected:
    ~peer_failure_listener() = default;
};

class router;

class peer_table {
public:
    // `routes` names the relay a new peer is reached through (peer::via).
    peer_table(std::size_t chunk_size, const router& routes) : chunk_size_(chunk_size), routes_(routes) {}

    // The peer at AV index `dest`, made from the AV's entry on first use.
    // Null with `err` set when `dest` is not in the AV.
    peer* for_index(fi_addr_t dest, const std::vector<endpoint_address>& av_entries, int& err);
    peer* at_index(fi_addr_t dest) const noexcept
    {
        return dest < by_index_.size() ? by_index_[dest] : nullptr;
    }
    peer* find(const endpoint_address::bytes& key) const noexcept;
    // Finds or makes the peer with this address.
    peer& by_address(const endpoint_address& a);
    peer& add_self(const endpoint_address& a);

    // An AV insert: the peer at that address (if one exists) gets its
    // number; returns it when it had none before (so that what it sent so
    // far can be renumbered).
    peer* on_av_insert(fi_addr_t index, const endpoint_address& a);

    void add_listener(peer_failure_listener* l) { listeners_.push_back(l); }
    // The peer fails: logged (as a warning while closing), every listener
    // told. Idempotent.
    void fail(peer& p, const std::string& why, bool closing);

    template <class F> void for_each(F&& f) const
    {
        for (const auto& [k, p] : peers_)
            f(*p);
    }

private:
    std::size_t chunk_size_;
    const router& routes_;
    std::vector<peer*> by_index_;
    std::map<endpoint_address::bytes, fi_addr_t> av_index_; // address -> first fi_addr it was inserted at
    std::map<endpoint_address::bytes, std::unique_ptr<peer>> peers_;
    std::vector<peer_failure_listener*> listeners_;
};

} // namespace hashi::fi
