// SPDX-License-Identifier: BSD-3-Clause
// Liveness of the peers an endpoint waits on.
//
// The provider has manual progress only, so a peer that computes for
// minutes outside MPI looks, at the protocol level, exactly like a stopped
// one. A small thread per endpoint tells them apart: it owns a UDP socket
// bound to the port number of the endpoint's TCP listener and answers
// authenticated pings at any time, also while the application computes. A
// stopped process (SIGSTOP stops every thread) or a dead network answers
// nothing.
//
// Threads:
//   - the progress thread (the application's, inside libfabric calls) owns
//     every provider object; it publishes the peers it waits on (publish())
//     and applies verdicts (take_verdicts()) through peer_table::fail;
//   - the liveness thread owns the UDP socket and the per-peer peer_watch
//     state; it never touches provider objects.
// They share only `published_` and `verdicts_` under `mu_`, and an atomic
// flag that makes the progress thread's common case one relaxed load.
#pragma once

#include "transport/address.hpp"
#include "transport/engine/peer_watch.hpp"
#include "transport/wire/heartbeat.hpp"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace hashi::fi {

// FI_HASHI_PEER_TIMEOUT (seconds, 0 = off) and FI_HASHI_HEARTBEAT (seconds).
struct liveness_settings {
    liveness_timing timing;
    bool enabled() const noexcept { return timing.timeout.count() > 0; }
};
std::optional<liveness_settings> read_liveness_settings(std::string& error);

// Binds the TCP listener (listening) to `ipv4` (host order; INADDR_ANY for
// every address) and, when `with_udp`, a UDP socket to the same address and
// port number, trying new ports while the UDP one is taken. Returns false
// with `error` set; the descriptors are then closed.
bool bind_listener_pair(
    std::uint32_t ipv4, bool with_udp, int& tcp_fd, int& udp_fd, std::uint16_t& port, std::string& error);

class liveness_monitor {
public:
    struct watched_peer {
        endpoint_address::bytes key {};
        std::uint32_t ipv4 = 0; // where its UDP socket is: its card's address and port
        std::uint16_t port = 0;
        std::uint16_t cluster = 0; // its card's cluster id (the relay's envelope names it)
        // A peer reached through a relay (engine/router.hpp): its pings go
        // to that relay's UDP port in the relay's envelope
        // (wire/relay_route.hpp); 0 when it is pinged directly.
        std::uint32_t relay_ipv4 = 0;
        std::uint16_t relay_port = 0;
        std::uint64_t nonce = 0;
        std::uint64_t rx_bytes = 0; // payload received from it so far: growth means it is alive
        std::string name; // peer::describe(), for the verdict
    };
    struct verdict {
        endpoint_address::bytes key {};
        std::string why;
    };
    struct counters {
        std::uint64_t pings_sent = 0, pongs_sent = 0, pongs_received = 0;
        std::uint64_t malformed = 0, bad_mac = 0, not_for_us = 0, stale_pongs = 0;
        std::uint64_t pongs_limited = 0, send_errors = 0;
    };

    // Takes ownership of `udp_fd` and starts the thread.
    liveness_monitor(liveness_settings s, const wire::job_key& key, std::uint64_t self_nonce, int udp_fd);
    ~liveness_monitor(); // stops and joins the thread, closes the socket
    liveness_monitor(const liveness_monitor&) = delete;
    liveness_monitor& operator=(const liveness_monitor&) = delete;

    // Progress thread: the complete set of peers it waits on now.
    void publish(std::vector<watched_peer> waiting);
    bool has_verdicts() const noexcept { return verdict_ready_.load(std::memory_order_relaxed); }
    std::vector<verdict> take_verdicts();
    counters stats() const;

private:
    struct tracked;
    void run();
    void receive(peer_watch::clock::time_point now);
    void tick(peer_watch::clock::time_point now);
    void send_ping(tracked& t, peer_watch::clock::time_point now);

    const liveness_settings settings_;
    const wire::job_key key_;
    const std::uint64_t self_nonce_;
    int udp_fd_ = -1;
    int wake_fd_ = -1; // eventfd: wakes the thread to stop

    mutable std::mutex mu_;
    std::vector<watched_peer> published_; // under mu_
    bool fresh_ = false; // under mu_
    std::vector<verdict> verdicts_; // under mu_
    counters counters_; // under mu_ (copied from the thread's own each tick)
    std::atomic<bool> verdict_ready_ {false};

    // Liveness thread only.
    std::vector<tracked> tracked_;
    counters local_;
    peer_watch::clock::time_point pong_window_ {};
    unsigned pongs_in_window_ = 0;

    std::thread thread_; // last: started once everything above is built
};

} // namespace hashi::fi
