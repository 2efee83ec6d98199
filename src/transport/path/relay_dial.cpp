// SPDX-License-Identifier: BSD-3-Clause
// Dialing a peer through a local relay (the router's route::kind::relay):
// the route handshake with the relay (wire/relay_route.hpp), before the
// ordinary connection handshake (path/handshake.cpp) runs over the same
// socket, end to end with the peer.
//
//   rank                                        local impi-relay
//   route_request {job, from, to, Nc}   ->
//                                       <-      route_challenge {Nr, MAC_relay}
//   check MAC_relay, else fail the peer
//   route_proof {MAC_rank}              ->      (connects through its trunk to
//                                                the destination's listener)
//                                       <-      route_result {status, reason}
//   ok: hello {from, to, Nc'} ... exactly as a direct dial
//
// The relay proves it holds the job's key before it learns anything it
// could not have seen on the wire, and the rank proves it before the relay
// opens a route for it. Each message is read exactly (route_result by its
// length field), never a byte more: what follows route_result is the
// destination's challenge, which read_handshake reads. A relay that closes
// the connection before route_result counts like a connection closed during
// the handshake (a few redials); one that does not answer within
// route_timeout_ns fails the peer, so a stuck relay cannot hang a dial.
#include "transport/path/path_manager.hpp"

#include "transport/common.hpp"

#include <algorithm>
#include <variant>

namespace hashi::fi {

namespace {

// What the rank can do about a route the relay did not make.
const char* route_advice(wire::route_status s) noexcept
{
    switch (s) {
    case wire::route_status::refused:
        return "the relay refused the route (is impi-relay configured for this job?)";
    case wire::route_status::unreachable:
        return "the peer's relay could not connect to the peer (is the process gone, or its address wrong?)";
    case wire::route_status::no_trunk:
        return "the relay has no link to the peer's cluster (are the relays of both clusters up, and trunks of each "
               "other?)";
    case wire::route_status::busy:
        return "the relay's limits are reached (raise them in impi-relay's configuration, or start fewer ranks)";
    case wire::route_status::ok:
        break;
    }
    return "the relay did not make the route";
}

} // namespace

std::string path_manager::relay_name(const path& c)
{
    return "the relay at " + relay_endpoint {c.relay.ipv4, c.relay.port}.describe() + " (trunk " +
        std::to_string(c.relay.trunk) + ")";
}

void path_manager::send_route_request(path& c)
{
    c.relay.hs.job_id = self_.job_id;
    c.relay.hs.from = self_.key;
    c.relay.hs.to = c.p->key;
    c.relay.hs.connector_nonce = fresh_nonce();
    wire::route_request rq;
    rq.job_id = c.relay.hs.job_id;
    rq.from = c.relay.hs.from;
    rq.to = c.relay.hs.to;
    rq.connector_nonce = c.relay.hs.connector_nonce;
    const auto b = wire::encode(rq);
    c.hs_out.insert(c.hs_out.end(), b.begin(), b.end());
    c.st = path::state::await_route_challenge;
    flush_handshake(c);
}

void path_manager::read_route(path& c)
{
    if (c.rx.size() < wire::route_result_max_size)
        c.rx.resize(std::max<std::size_t>(wire::route_result_max_size, 4096));
    while (c.st == path::state::await_route_challenge || c.st == path::state::await_route_result) {
        std::size_t need = wire::route_challenge_size;
        if (c.st == path::state::await_route_challenge) {
            if (c.tail == need) {
                auto d = wire::decode_route_challenge(c.rx.data(), c.tail);
                c.head = c.tail = 0;
                if (const auto* e = std::get_if<wire::decode_error>(&d)) {
                    failed(c, relay_name(c) + " sent a bad route challenge: " + e->reason);
                    return;
                }
                on_route_challenge(c, std::get<wire::route_challenge>(d));
                continue;
            }
        } else {
            auto d = wire::decode_route_result(c.rx.data(), c.tail);
            if (const auto* e = std::get_if<wire::decode_error>(&d)) {
                failed(c, relay_name(c) + " sent a bad route result: " + e->reason);
                return;
            }
            if (const auto* r = std::get_if<wire::route_result>(&d)) {
                c.head = c.tail = 0;
                on_route_result(c, *r);
                continue;
            }
            need = std::get<wire::need_more>(d).bytes;
        }
        // Exactly what the message still needs: the bytes after it are the
        // destination's.
        if (fill_exactly(c, need) != fill_result::got)
            return; // blocked until more comes, or closed (handshake_closed)
    }
    // The route is made: the destination's challenge may be here already.
    if (c.st == path::state::await_challenge)
        read_handshake(c);
}

// The relay must prove it holds the job's key for this very request.
void path_manager::on_route_challenge(path& c, const wire::route_challenge& ch)
{
    c.relay.hs.relay_nonce = ch.relay_nonce;
    if (!same_mac(ch.relay_mac, key_.relay_route_mac(c.relay.hs))) {
        failed(c,
            relay_name(c) +
                " could not prove it belongs to this job (a relay of another job, or a stranger at that address)" +
                (key_.is_random() ? "; this process has no job key (HASHI_JOB_KEY): start the job with Hashi's mpiexec"
                                  : ""));
        return;
    }
    wire::route_proof pr;
    pr.rank_mac = key_.rank_route_mac(c.relay.hs);
    const auto b = wire::encode(pr);
    c.hs_out.insert(c.hs_out.end(), b.begin(), b.end());
    c.st = path::state::await_route_result;
    flush_handshake(c);
}

void path_manager::on_route_result(path& c, const wire::route_result& r)
{
    if (r.status != wire::route_status::ok) {
        failed(c,
            relay_name(c) + " did not make the route to it: " + wire::route_status_name(r.status) +
                (r.reason.empty() ? std::string() : " ('" + r.reason + "')") + ": " + route_advice(r.status));
        return;
    }
    HASHI_DEBUG("%s made the route to %s", relay_name(c).c_str(), c.p->describe().c_str());
    // From here on the connection is a pipe to the peer's listener.
    send_hello(c);
}

void path_manager::expire_routes()
{
    const std::uint64_t now = monotonic_ns();
    for (auto& c : paths_) {
        const bool routing = c->relay.active &&
            (c->st == path::state::dialing || c->st == path::state::await_route_challenge ||
                c->st == path::state::await_route_result);
        if (routing && now >= c->relay.deadline_ns)
            failed(*c,
                relay_name(*c) + " did not make the route to it within " +
                    std::to_string(route_timeout_ns / 1'000'000'000ull) +
                    " s (is the relay overloaded, or its link to the peer's cluster down?)");
    }
}

} // namespace hashi::fi
