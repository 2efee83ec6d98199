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
#include "transport/endpoint.hpp"

#include <sys/epoll.h>
#include <unistd.h>

#include <type_traits>
#include <variant>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace hashi::fi {

namespace {

constexpr int max_redials = 5;
constexpr std::uint64_t first_redial_delay_ns = 50'000'000ull; // doubles each time

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

void endpoint::send_hello(connection& c)
{
    c.hs.job_id = job_id_;
    c.hs.connector = self_key_;
    c.hs.acceptor = c.p->key;
    c.hs.connector_nonce = fresh_nonce();
    wire::hello h;
    h.from = self_key_;
    h.to = c.p->key;
    h.connector_nonce = c.hs.connector_nonce;
    append_handshake(c.hs_out, wire::frame_type::hello, h);
    c.st = connection::state::await_challenge;
    if (flush_handshake(c))
        arm_write(c, false);
}

bool endpoint::expected_handshake_frame(const connection& c, wire::frame_type t) const noexcept
{
    switch (c.st) {
    case connection::state::await_hello:
        return t == wire::frame_type::hello;
    case connection::state::await_challenge:
        return t == wire::frame_type::challenge;
    case connection::state::await_proof:
        return t == wire::frame_type::proof;
    case connection::state::open:
        return c.ack_pending ? t == wire::frame_type::hello_ack : !wire::is_handshake(t);
    default:
        return false;
    }
}

void endpoint::on_handshake_frame(connection& c, const wire::frame_header& h, const std::uint8_t* payload)
{
    const std::size_t n = h.length;
    auto bad = [&](const wire::decode_error& e) {
        if (c.outgoing)
            connection_failed(c, "bad handshake from the peer: " + e.reason);
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
        return run(wire::decode_hello(payload, n), &endpoint::on_hello);
    case wire::frame_type::challenge:
        return run(wire::decode_challenge(payload, n), &endpoint::on_challenge);
    case wire::frame_type::proof:
        return run(wire::decode_proof(payload, n), &endpoint::on_proof);
    case wire::frame_type::hello_ack:
        return run(wire::decode_hello_ack(payload, n), &endpoint::on_hello_ack);
    default:
        return bad(wire::decode_error {"not a handshake frame"});
    }
}

void endpoint::refuse(connection& c, const char* why)
{
    refusals_.warn("refused a connection from %s: %s", remote_of(c.fd).c_str(), why);
    close_connection(c);
}

// Acceptor: nothing is known about the connector yet.
void endpoint::on_hello(connection& c, const wire::hello& h)
{
    if (h.to != self_key_)
        return refuse(c, "it asked for another endpoint (a stale address, or not a process of this job)");
    if (h.from == self_key_)
        return refuse(c, "it claims this endpoint's own address");
    c.hs.job_id = job_id_;
    c.hs.connector = h.from;
    c.hs.acceptor = self_key_;
    c.hs.connector_nonce = h.connector_nonce;
    c.hs.acceptor_nonce = fresh_nonce();
    // Look the claimed peer up without creating it: a stranger must not be
    // able to grow the peer table.
    c.hs.status = wire::hello_status::ok;
    if (auto it = peers_.find(h.from); it != peers_.end()) {
        const peer& p = *it->second;
        if (p.conn != nullptr || p.failed || (p.dialing != nullptr && self_key_ < p.key))
            c.hs.status = wire::hello_status::duplicate;
    }
    wire::challenge ch;
    ch.acceptor_nonce = c.hs.acceptor_nonce;
    ch.status = c.hs.status;
    ch.acceptor_mac = key_->acceptor_mac(c.hs);
    append_handshake(c.hs_out, wire::frame_type::challenge, ch);
    c.st = connection::state::await_proof;
    flush_handshake(c);
}

// Connector: the acceptor must prove it holds the key, for the address we
// wanted, before it learns anything about us.
void endpoint::on_challenge(connection& c, const wire::challenge& ch)
{
    peer& p = *c.p;
    c.hs.acceptor_nonce = ch.acceptor_nonce;
    c.hs.status = ch.status;
    if (!same_mac(ch.acceptor_mac, key_->acceptor_mac(c.hs))) {
        connection_failed(c,
            "the process that answered at " + p.addr.describe() +
                " could not prove it belongs to this job (a process of another job on a reused port, or a stranger)" +
                (key_->is_random() ? "; this process has no job key (HASHI_JOB_KEY): start the job with Hashi's mpiexec"
                                   : ""));
        return;
    }
    p.redials = 0;
    if (ch.status == wire::hello_status::duplicate || p.conn != nullptr) {
        // The peer's own connection to us carries the traffic; our queue
        // waits for it.
        c.p = nullptr;
        if (p.dialing == &c)
            p.dialing = nullptr;
        close_connection(c);
        return;
    }
    wire::proof pr;
    pr.connector_mac = key_->connector_mac(c.hs);
    pr.who = own_identity(host_);
    append_handshake(c.hs_out, wire::frame_type::proof, pr);
    c.ack_pending = true;
    // Our frames may follow the proof at once: the acceptor reads them only
    // after the proof checked.
    attach(p, c);
}

// Acceptor: the connector proved it holds the key and is `from`.
void endpoint::on_proof(connection& c, const wire::proof& pr)
{
    if (!same_mac(pr.connector_mac, key_->connector_mac(c.hs)))
        return refuse(c, "it could not prove it belongs to this job");
    const auto from = endpoint_address::decode(c.hs.connector.data(), c.hs.connector.size());
    if (c.hs.status == wire::hello_status::duplicate) {
        // We told it to drop this connection; a connector that goes on anyway
        // breaks the protocol.
        log_warn("closed a duplicate connection from %s that was used after it was refused", from->describe().c_str());
        close_connection(c);
        return;
    }
    peer& p = peer_by_address(*from);
    if (p.conn != nullptr || p.failed) {
        log_warn("closed a second connection from %s", p.describe().c_str());
        close_connection(c);
        return;
    }
    p.host = pr.who.host;
    p.pid = pr.who.pid;
    if (p.dialing != nullptr) {
        // Both connected at once and theirs wins (we said so in the
        // challenge): drop ours before it carries anything.
        connection* mine = p.dialing;
        p.dialing = nullptr;
        mine->p = nullptr;
        close_connection(*mine);
    }
    wire::hello_ack ack;
    ack.who = own_identity(host_);
    append_handshake(c.hs_out, wire::frame_type::hello_ack, ack);
    if (!flush_handshake(c) && c.st == connection::state::closed)
        return;
    attach(p, c);
}

void endpoint::on_hello_ack(connection& c, const wire::hello_ack& a)
{
    c.ack_pending = false;
    c.p->host = a.who.host;
    c.p->pid = a.who.pid;
}

// A connection ended before its handshake was done.
void endpoint::handshake_closed(connection& c, const std::string& why)
{
    peer* p = c.p;
    const bool ours = c.outgoing && p != nullptr && p->dialing == &c;
    if (!ours) {
        // A connection that lost a simultaneous connect, or a stranger.
        if (p != nullptr && p->dialing == &c)
            p->dialing = nullptr;
        c.p = nullptr;
        close_connection(c);
        return;
    }
    if (c.st == connection::state::await_challenge && p->redials < max_redials && !closing_) {
        // Closed before the acceptor answered: it may have evicted us in a
        // flood of strangers, or its accept queue overflowed. Try again.
        close_connection(c);
        p->redial_at_ns = monotonic_ns() + (first_redial_delay_ns << p->redials);
        ++p->redials;
        redial_wait_.push_back(p);
        HASHI_DEBUG("connection to %s closed during the handshake (%s); dialing again", p->describe().c_str(),
            why.c_str());
        return;
    }
    connection_failed(c,
        "the connection closed during the handshake (" + why +
            "): the process at that address is gone, or is not a process of this job");
}

bool endpoint::redial_due(std::uint64_t now)
{
    bool dialed = false;
    std::erase_if(redial_wait_, [&](peer* p) {
        if (p->failed || p->conn != nullptr || p->dialing != nullptr)
            return true;
        if (now < p->redial_at_ns)
            return false;
        dial(*p);
        dialed = true;
        return true;
    });
    return dialed;
}

void endpoint::evict_stale_handshakes(std::uint64_t now, bool make_room)
{
    connection* oldest = nullptr;
    for (auto& c : conns_) {
        const bool inbound_pending = !c->outgoing &&
            (c->st == connection::state::await_hello || c->st == connection::state::await_proof);
        if (!inbound_pending)
            continue;
        if (now >= c->hs_deadline_ns) {
            refuse(*c, "it did not finish its handshake in time");
            continue;
        }
        if (oldest == nullptr || c->hs_deadline_ns < oldest->hs_deadline_ns)
            oldest = c.get();
    }
    if (make_room && oldest != nullptr && handshakes_inbound_ >= max_inbound_handshakes)
        refuse(*oldest, "too many connections are in their handshake at once; the oldest is closed");
}

bool endpoint::timers_due(std::uint64_t now)
{
    bool moved = false;
    if (listen_paused_ && now >= listen_resume_ns_) {
        epoll_event ev {};
        ev.events = EPOLLIN;
        ev.data.ptr = nullptr;
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev);
        listen_paused_ = false;
        moved = true;
    }
    if (handshakes_inbound_ > 0 && now >= handshake_check_ns_) {
        handshake_check_ns_ = now + 100'000'000ull;
        evict_stale_handshakes(now, false);
    }
    if (!redial_wait_.empty() && redial_due(now))
        moved = true;
    return moved;
}

} // namespace hashi::fi
