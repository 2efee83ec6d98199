// SPDX-License-Identifier: BSD-3-Clause
// The connection handshake: each side proves it holds the job's key
// (engine/job_key.hpp) before anything else is read or sent, and a peer is
// only ever the address it proved.
//
//   connector                                  acceptor
//   hello {from, to, Nc}              ->       to must be this endpoint, else
//                                              close (nothing revealed)
//                                     <-       challenge {Na, status,
//                                                MAC_a(job, from, to, Nc, Na, status)}
//   check MAC_a, else fail the peer
//   proof {MAC_c(...), pid, host}     ->       check MAC_c, else close
//   then its frames                            attach the peer `from`
//                                     <-       hello_ack {pid, host}, then frames
//
// Both nonces are fresh per connection and both MACs cover both addresses
// and both nonces, under different labels: a recorded or reflected MAC, or
// one made for another pair of endpoints, never passes. A stranger learns
// nothing from a refusal: the connection just closes, with one rate-limited
// line in this endpoint's log naming the stranger's address.
//
// Simultaneous connects: the connection opened by the endpoint with the
// smaller address wins. The acceptor says "duplicate" in its challenge (so
// the verdict is covered by its MAC) when its own attempt wins or the peer
// is already connected; it closes its own losing attempt only once the
// winner's proof checked, so a stranger claiming a peer's address cannot
// make it drop a real connection attempt.
//
// Bounds: an accepted connection must finish its handshake within
// handshake_timeout; at most max_inbound_handshakes are held at once, the
// oldest closed to make room, so that idle strangers cannot use up this
// process's descriptors. A connector whose connection is closed during the
// handshake (evicted in a flood, or the peer's accept queue overflowed)
// dials again a few times before it gives up on the peer.
#include "transport/path/path_manager.hpp"

#include "transport/common.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <type_traits>
#include <variant>

namespace hashi::fi {

namespace {

constexpr int max_redials = 5;
constexpr std::uint64_t first_redial_delay_ns = 50'000'000ull; // doubles each time
// How often accepted paths are checked against their deadline.
constexpr std::uint64_t expiry_period_ns = 100'000'000ull;

template <class Msg> void append_handshake(std::vector<std::uint8_t>& out, wire::frame_type t, const Msg& m)
{
    const auto body = wire::encode(m);
    wire::frame_header fh;
    fh.type = t;
    fh.length = body.size();
    const auto hb = wire::encode_header(fh);
    out.insert(out.end(), hb.begin(), hb.end());
    out.insert(out.end(), body.begin(), body.end());
}

std::string remote_of(int fd)
{
    sockaddr_in sin {};
    socklen_t len = sizeof sin;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&sin), &len) != 0 || sin.sin_family != AF_INET)
        return "an unknown address";
    char ip[INET_ADDRSTRLEN] = "?";
    ::inet_ntop(AF_INET, &sin.sin_addr, ip, sizeof ip);
    return std::string(ip) + ":" + std::to_string(ntohs(sin.sin_port));
}

wire::identity own_identity(const std::string& host)
{
    return {static_cast<std::uint32_t>(getpid()), host};
}

} // namespace

void path_manager::send_hello(path& c)
{
    c.hs.job_id = self_.job_id;
    c.hs.connector = self_.key;
    c.hs.acceptor = c.p->key;
    c.hs.connector_nonce = fresh_nonce();
    c.hs.lane = c.lane;
    wire::hello h;
    h.from = self_.key;
    h.to = c.p->key;
    h.connector_nonce = c.hs.connector_nonce;
    h.lane = c.lane;
    append_handshake(c.hs_out, wire::frame_type::hello, h);
    c.st = path::state::await_challenge;
    flush_handshake(c);
}

bool path_manager::expected_handshake_frame(const path& c, wire::frame_type t) const noexcept
{
    switch (c.st) {
    case path::state::await_hello:
        return t == wire::frame_type::hello;
    case path::state::await_challenge:
        return t == wire::frame_type::challenge;
    case path::state::await_proof:
        return t == wire::frame_type::proof;
    case path::state::open:
        return c.ack_pending && t == wire::frame_type::hello_ack;
    default:
        return false;
    }
}

void path_manager::on_handshake_frame(path& c, const wire::frame_header& h, const std::uint8_t* payload)
{
    const std::size_t n = h.length;
    auto bad = [&](const wire::decode_error& e) {
        if (c.outgoing())
            failed(c, "bad handshake from the peer: " + e.reason);
        else
            refuse(c, e.reason.c_str());
    };
    // Decodes with the decoder of the frame's type and hands the message to
    // its handler, or refuses what does not decode.
    auto run = [&](auto decoded, auto handler) {
        std::visit(
            [&](const auto& m) {
                if constexpr (std::is_same_v<std::decay_t<decltype(m)>, wire::decode_error>)
                    bad(m);
                else
                    (this->*handler)(c, m);
            },
            decoded);
    };
    switch (h.type) {
    case wire::frame_type::hello:
        return run(wire::decode_hello(payload, n), &path_manager::on_hello);
    case wire::frame_type::challenge:
        return run(wire::decode_challenge(payload, n), &path_manager::on_challenge);
    case wire::frame_type::proof:
        return run(wire::decode_proof(payload, n), &path_manager::on_proof);
    case wire::frame_type::hello_ack:
        return run(wire::decode_hello_ack(payload, n), &path_manager::on_hello_ack);
    default:
        return bad(wire::decode_error {"not a handshake frame"});
    }
}

void path_manager::refuse(path& c, const char* why)
{
    refusals_.warn("refused a connection from %s: %s", remote_of(c.fd()).c_str(), why);
    close(c);
}

// Acceptor: nothing is known about the connector yet.
void path_manager::on_hello(path& c, const wire::hello& h)
{
    if (h.to != self_.key)
        return refuse(c, "it asked for another endpoint (a stale address, or not a process of this job)");
    if (h.from == self_.key)
        return refuse(c, "it claims this endpoint's own address");
    c.hs.job_id = self_.job_id;
    c.hs.connector = h.from;
    c.hs.acceptor = self_.key;
    c.hs.connector_nonce = h.connector_nonce;
    c.hs.acceptor_nonce = fresh_nonce();
    c.hs.lane = h.lane;
    c.lane = h.lane;
    // Look the claimed peer up without creating it: a stranger must not be
    // able to grow the peer table.
    c.hs.status = wire::hello_status::ok;
    const peer* p = peers_.find(h.from);
    if (p != nullptr) {
        // Per lane: a lane already open, or both dialing it and ours wins.
        const path* mine = h.lane == 0 ? p->dialing : p->lane_dialing[h.lane];
        if (p->lane_path(h.lane) != nullptr || p->failed || (mine != nullptr && self_.key < p->key))
            c.hs.status = wire::hello_status::duplicate;
    }
    // A stripe lane joins an open lane 0 (it carries chunks of transfers
    // that lane 0 started); before that it is declined ("duplicate": the
    // connector closes it, and its peer is unharmed).
    if (h.lane != 0 && (p == nullptr || !p->connected()))
        c.hs.status = wire::hello_status::duplicate;
    wire::challenge ch;
    ch.acceptor_nonce = c.hs.acceptor_nonce;
    ch.status = c.hs.status;
    ch.acceptor_mac = key_.acceptor_mac(c.hs);
    append_handshake(c.hs_out, wire::frame_type::challenge, ch);
    c.st = path::state::await_proof;
    flush_handshake(c);
}

// Connector: the acceptor must prove it holds the key, for the address we
// wanted, before it learns anything about us.
void path_manager::on_challenge(path& c, const wire::challenge& ch)
{
    peer& p = *c.p;
    c.hs.acceptor_nonce = ch.acceptor_nonce;
    c.hs.status = ch.status;
    if (!same_mac(ch.acceptor_mac, key_.acceptor_mac(c.hs))) {
        failed(c,
            "the process that answered at " + p.addr.describe() +
                " could not prove it belongs to this job (a process of another job on a reused port, or a stranger)" +
                (key_.is_random() ? "; this process has no job key (HASHI_JOB_KEY): start the job with Hashi's mpiexec"
                                  : ""));
        return;
    }
    p.redials = 0;
    if (c.lane != 0 && (ch.status == wire::hello_status::duplicate || p.lane_path(c.lane) != nullptr)) {
        // The peer's own attempt at this lane wins, or it declined the lane.
        // Not asked again: the peer's own attempt makes the lane, or the
        // peer declined it.
        p.lane_given_up[c.lane] = true;
        if (p.lane_dialing[c.lane] == &c)
            p.lane_dialing[c.lane] = nullptr;
        c.p = nullptr;
        close(c);
        return;
    }
    if (c.lane == 0 && (ch.status == wire::hello_status::duplicate || p.connected())) {
        // The peer's own connection to us carries the traffic; our queue
        // waits for it.
        if (p.dialing == &c)
            p.dialing = nullptr;
        c.p = nullptr;
        close(c);
        return;
    }
    wire::proof pr;
    pr.connector_mac = key_.connector_mac(c.hs);
    pr.who = own_identity(self_.host);
    append_handshake(c.hs_out, wire::frame_type::proof, pr);
    c.ack_pending = true;
    // Our frames may follow the proof at once: the acceptor reads them only
    // after the proof checked.
    open(p, c);
}

// Acceptor: the connector proved it holds the key and is `from`.
void path_manager::on_proof(path& c, const wire::proof& pr)
{
    if (!same_mac(pr.connector_mac, key_.connector_mac(c.hs)))
        return refuse(c, "it could not prove it belongs to this job");
    const auto from = endpoint_address::decode(c.hs.connector.data(), c.hs.connector.size());
    if (c.hs.status == wire::hello_status::duplicate) {
        // We told it to drop this connection; a connector that goes on anyway
        // breaks the protocol.
        log_warn("closed a duplicate connection from %s that was used after it was refused", from->describe().c_str());
        close(c);
        return;
    }
    peer& p = peers_.by_address(*from);
    if (p.lane_path(c.lane) != nullptr || p.failed || (c.lane != 0 && !p.connected())) {
        log_warn("closed a second connection from %s (lane %u)", p.describe().c_str(), c.lane);
        close(c);
        return;
    }
    p.host = pr.who.host;
    p.pid = pr.who.pid;
    if (path*& dialing = c.lane == 0 ? p.dialing : p.lane_dialing[c.lane]; dialing != nullptr) {
        // Both connected at once and theirs wins (we said so in the
        // challenge): drop ours before it carries anything.
        path* mine = dialing;
        dialing = nullptr;
        mine->p = nullptr;
        close(*mine);
    }
    wire::hello_ack ack;
    ack.who = own_identity(self_.host);
    append_handshake(c.hs_out, wire::frame_type::hello_ack, ack);
    --handshakes_inbound_;
    c.st = path::state::open; // no longer counted as an inbound handshake
    if (!flush_handshake(c) && c.st == path::state::closed)
        return;
    open(p, c);
}

void path_manager::on_hello_ack(path& c, const wire::hello_ack& a)
{
    c.ack_pending = false;
    c.p->host = a.who.host;
    c.p->pid = a.who.pid;
}

void path_manager::open(peer& p, path& c)
{
    c.p = &p;
    c.st = path::state::open;
    p.paths.push_back(&c);
    if (p.dialing == &c)
        p.dialing = nullptr;
    if (p.lane_dialing[c.lane] == &c)
        p.lane_dialing[c.lane] = nullptr;
    HASHI_DEBUG("connected to %s (lane %u)", p.describe().c_str(), c.lane);
    const route r = routes_.route_for(p);
    if (protect_.level != secure::protection::none && !p.is_self && (r.wan || protect_.local)) {
        // No frame moves until the protected stream is up (advance_stream).
        c.protect = protect_.level;
        c.securing = true;
        advance_stream(c);
        return;
    }
    up_.path_open(p, c);
}

// A connection ended before its handshake was done.
void path_manager::handshake_closed(path& c, const std::string& why)
{
    peer* p = c.p;
    if (p != nullptr && c.lane != 0 && c.st != path::state::open && p->lane_dialing[c.lane] == &c)
        return give_up_lane(c, "the connection closed during its handshake (" + why + ")");
    const bool ours = c.outgoing() && p != nullptr && p->dialing == &c;
    if (!ours) {
        // A connection that lost a simultaneous connect, or a stranger; or
        // an open path whose hello_ack never came.
        if (p != nullptr && c.st == path::state::open) {
            failed(c, "the connection closed during the handshake (" + why + ")");
            return;
        }
        if (p != nullptr && p->dialing == &c)
            p->dialing = nullptr;
        c.p = nullptr;
        close(c);
        return;
    }
    const bool routing = c.st == path::state::await_route_challenge || c.st == path::state::await_route_result;
    if ((c.st == path::state::await_challenge || routing) && p->redials < max_redials && !closing_) {
        // Closed before the acceptor answered: it may have evicted us in a
        // flood of strangers, or its accept queue overflowed (or, through a
        // relay, the relay closed before it made the route). Try again.
        close(c);
        schedule_redial(*p);
        HASHI_DEBUG("connection to %s closed during the handshake (%s); dialing again", p->describe().c_str(),
            why.c_str());
        return;
    }
    if (routing) {
        failed(c, relay_name(c) + " closed the connection before it made the route (" + why + ")");
        return;
    }
    failed(c,
        "the connection closed during the handshake (" + why +
            "): the process at that address is gone, or is not a process of this job");
}

void path_manager::schedule_redial(peer& p)
{
    p.redial_pending = true;
    const std::uint64_t at = monotonic_ns() + (first_redial_delay_ns << p.redials);
    ++p.redials;
    // Peers live as long as the endpoint, so the timer may hold a pointer.
    loop_.at(at, [this, pp = &p] {
        if (!pp->redial_pending)
            return;
        pp->redial_pending = false;
        if (!pp->failed && !pp->connected() && pp->dialing == nullptr && !closing_)
            dial(*pp);
    });
}

void path_manager::expire_handshakes()
{
    const std::uint64_t now = monotonic_ns();
    for (auto& c : paths_) {
        const bool inbound_pending =
            !c->outgoing() && (c->st == path::state::await_hello || c->st == path::state::await_proof);
        if (inbound_pending && now >= c->hs_deadline_ns)
            refuse(*c, "it did not finish its handshake in time");
    }
    expiry_timer_ = handshakes_inbound_ > 0;
    if (expiry_timer_)
        loop_.at(now + expiry_period_ns, [this] { expire_handshakes(); });
}

void path_manager::evict_oldest_handshake()
{
    path* oldest = nullptr;
    for (auto& c : paths_) {
        const bool inbound_pending =
            !c->outgoing() && (c->st == path::state::await_hello || c->st == path::state::await_proof);
        if (inbound_pending && (oldest == nullptr || c->hs_deadline_ns < oldest->hs_deadline_ns))
            oldest = c.get();
    }
    if (oldest != nullptr)
        refuse(*oldest, "too many connections are in their handshake at once; the oldest is closed");
}

} // namespace hashi::fi
