// SPDX-License-Identifier: BSD-3-Clause
// The path manager: makes and ends paths. It owns the listening socket and
// every path, dials what the router says, accepts, runs the authenticated
// handshake (path/handshake.cpp) and resolves simultaneous connects, bounds
// what strangers can make it hold, and redials a connection closed during
// its handshake. Once a path is proved it is handed to the engine
// (path_events::path_open) and, when its handshake bytes are all read, to
// the receive backend (path_events::path_readable).
//
// Paths are freed only in reap(), after a progress round, so an event
// already fetched for a path closed in the same round still finds it.
// Progress thread only.
#pragma once

#include "transport/engine/job_key.hpp"
#include "transport/engine/log_limiter.hpp"
#include "transport/engine/peer_table.hpp"
#include "transport/engine/progress.hpp"
#include "transport/engine/router.hpp"
#include "transport/path/path.hpp"
#include "transport/secure/protection.hpp"
#include "transport/wire/handshake.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hashi::fi {

class path_events {
public:
    // The path carries frames to `p` from now on.
    virtual void path_open(peer& p, path& c) = 0;
    // The handshake's bytes are all read: the receive backend reads the rest.
    virtual void path_readable(path& c) = 0;
    // A path to a known peer could not be made or broke during the handshake.
    virtual void path_failed(path& c, const std::string& why) = 0;

protected:
    ~path_events() = default;
};

// Which paths get a protected byte stream (src/transport/secure): those
// that cross the WAN, at `level` (FI_HASHI_WAN_PROTECTION), and with
// `local` (FI_HASHI_PROTECT_LOCAL=1) those inside the cluster too.
struct protection_policy {
    secure::protection level = secure::default_wan_protection;
    bool local = false;
};

struct endpoint_identity {
    endpoint_address addr;
    endpoint_address::bytes key {};
    std::uint64_t job_id = 0;
    std::string host;
};

class path_manager final : public event_handler {
public:
    path_manager(progress_loop& loop, peer_table& peers, const router& routes, const job_key& key,
        const endpoint_identity& self, protection_policy protect, path_owner& owner, path_events& up);
    ~path_manager();

    // Takes the bound, listening socket.
    void listen(int listen_fd);
    // The loopback pair that sends to self take (the same path as any peer).
    // `tcp`: over loopback TCP instead of a Unix socket pair, for a
    // receive backend that reads TCP only (the o2g module).
    void setup_self(peer& self, bool tcp = false);
    // Starts a connection to the peer (the router says where): lane 0, or
    // a stripe lane through another trunk.
    void dial(peer& p, std::uint8_t lane = 0);
    // Dials every stripe lane the peer does not have yet (lane 0 open, more
    // than one trunk); a lane given up is not dialed again.
    void ensure_lanes(peer& p, std::size_t lanes);
    // Makes sure a peer that is to get frames has or gets a path.
    void ensure_path(peer& p)
    {
        if (!p.connected() && p.dialing == nullptr && !p.redial_pending && !p.failed && !p.is_self)
            dial(p);
    }

    // The listener's events (accept).
    void on_events(std::uint32_t events) override;
    // Events of a path that is still in its handshake (engine.cpp routes
    // them here).
    void handshake_events(path& c, std::uint32_t events);
    // Closes the path and unlinks it from its peer (idempotent).
    void close(path& c);
    // A path ended by the other side or broken: closes it, and fails its
    // peer if it had one (or logs a refusal if it was a stranger).
    void failed(path& c, const std::string& why);
    void set_closing() noexcept { closing_ = true; }
    void reap();

    // Protected paths whose stream holds decoded input epoll cannot see.
    template <class F> void for_each_buffered(F&& f)
    {
        if (protected_paths_ == 0)
            return;
        for (auto& c : paths_)
            if (c->st == path::state::open && c->attached && c->buffered_input())
                f(*c);
    }
    template <class F> void for_each_path(F&& f) const
    {
        for (const auto& c : paths_)
            f(*c);
    }
    std::uint64_t refusals() const noexcept { return refusals_.total(); }

private:
    path& add_path(int fd, bool outgoing);
    void connected(path& c);
    void connect_failed(path& c, int err);
    bool read_handshake(path& c);
    // Reads into c.rx[c.tail, need), never a byte past `need` (what follows
    // a handshake message is not the handshake's). `got`: some bytes came;
    // `blocked`: none now; `closed`: handshake_closed() has dealt with it.
    enum class fill_result : std::uint8_t { got, blocked, closed };
    fill_result fill_exactly(path& c, std::size_t need);

    // The route through a local relay, before the handshake
    // (path/relay_dial.cpp).
    void send_route_request(path& c);
    void read_route(path& c);
    void on_route_challenge(path& c, const wire::route_challenge& ch);
    void on_route_result(path& c, const wire::route_result& r);
    void expire_routes();
    // "the relay at 10.0.0.1:7000 (trunk 1)" for messages.
    static std::string relay_name(const path& c);

    // The handshake (path/handshake.cpp).
    void send_hello(path& c);
    bool expected_handshake_frame(const path& c, wire::frame_type t) const noexcept;
    void on_handshake_frame(path& c, const wire::frame_header& h, const std::uint8_t* payload);
    void on_hello(path& c, const wire::hello& h);
    void on_challenge(path& c, const wire::challenge& ch);
    void on_proof(path& c, const wire::proof& pr);
    void on_hello_ack(path& c, const wire::hello_ack& a);
    void refuse(path& c, const char* why);
    void handshake_closed(path& c, const std::string& why);
    void open(peer& p, path& c);
    // Protected paths: opens the stream once the handshake's bytes are
    // through, and drives its own handshake; then the path is ready.
    void advance_stream(path& c);
    void ready(path& c);
    bool flush_handshake(path& c);
    void schedule_redial(peer& p);
    // A stripe lane that could not be made: closed, never dialed again,
    // the peer unharmed (its other lanes carry what this one would have).
    void give_up_lane(path& c, const std::string& why);
    void expire_handshakes();
    void evict_oldest_handshake();
    void pause_accepting();

    progress_loop& loop_;
    peer_table& peers_;
    const router& routes_;
    const job_key& key_;
    const endpoint_identity& self_;
    const protection_policy protect_;
    std::size_t protected_paths_ = 0; // paths that were ever given a stream
    path_owner& owner_;
    path_events& up_;
    int listen_fd_ = -1;
    registration listen_reg_;
    std::vector<std::unique_ptr<path>> paths_;
    // An accepted connection has this long to prove itself, and at most this
    // many are held at once (path/handshake.cpp says why).
    static constexpr std::uint64_t handshake_timeout_ns = 10'000'000'000ull;
    static constexpr std::size_t max_inbound_handshakes = 64;
    // A relay has this long from the dial on to answer the route (connect,
    // challenge, result), so a stuck relay cannot hold a dial forever.
    static constexpr std::uint64_t route_timeout_ns = 20'000'000'000ull;
    std::size_t handshakes_inbound_ = 0; // accepted paths not yet proved
    bool expiry_timer_ = false;
    log_limiter refusals_; // strangers refused
    log_limiter accept_failures_ {1}; // accept errors (out of descriptors): once a second
    bool closing_ = false;
};

} // namespace hashi::fi
