// SPDX-License-Identifier: BSD-3-Clause
// The daemon: its sockets, its link to impi-server, the relay table, the
// trunk plan and the liveness forwarding (relay.hpp has the whole picture).
#include "relay/relay/relay.hpp"

#include "mpi/mpiexec/secrets.hpp"
#include "relay/relay/trunk_tuning.hpp"
#include "transport/wire/heartbeat.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <stdexcept>

namespace hashi::relay {

namespace {

// The relay's clock in nanoseconds, as trunk_pacing counts time.
std::uint64_t now_ns()
{
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now().time_since_epoch()).count());
}

constexpr std::size_t max_trunk_handshakes = 64; // WAN connections that have not proved the key
constexpr std::size_t max_greetings = 256; // LAN connections that have not said what they are
constexpr std::size_t max_pending_pongs = 4096;
constexpr auto pong_lifetime = std::chrono::seconds(30);
constexpr auto trunk_setup_time = std::chrono::seconds(20);
constexpr auto linger_time = std::chrono::seconds(3);

std::string ipv4_text(std::uint32_t a)
{
    const std::uint32_t n = htonl(a);
    char buf[INET_ADDRSTRLEN] = "?";
    ::inet_ntop(AF_INET, &n, buf, sizeof buf);
    return buf;
}

UniqueFd listen_on(int type, std::uint32_t ipv4, std::uint16_t& port, const char* what)
{
    UniqueFd fd(::socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) {
        throw std::runtime_error(std::string("cannot create the ") + what + " socket: " + std::strerror(errno));
    }
    int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in sin {};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(ipv4);
    sin.sin_port = htons(port);
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&sin), sizeof sin) != 0) {
        throw std::runtime_error(std::string("cannot bind the ") + what + " socket to " + ipv4_text(ipv4) + ":" +
            std::to_string(port) + ": " + std::strerror(errno));
    }
    if (type == SOCK_STREAM && ::listen(fd.get(), SOMAXCONN) != 0) {
        throw std::runtime_error(std::string("cannot listen on the ") + what + " socket: " + std::strerror(errno));
    }
    socklen_t len = sizeof sin;
    ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&sin), &len);
    port = ntohs(sin.sin_port);
    return fd;
}

} // namespace

daemon::daemon(relay_config cfg) : cfg_(std::move(cfg)) { }

daemon::~daemon() = default;

relay_name daemon::self() const
{
    return {static_cast<std::uint16_t>(cfg_.cluster), static_cast<std::uint16_t>(cfg_.id)};
}

void daemon::log(const std::string& line) const
{
    std::cerr << "impi-relay[" << cfg_.cluster << "/" << cfg_.id << "]: " << line << std::endl;
}

std::string daemon::listen()
{
    // The liveness datagrams use the LAN port's number over UDP, as the
    // ranks' own liveness sockets do: try again while that one is taken.
    for (int attempt = 0;; ++attempt) {
        std::uint16_t port = cfg_.lan_port;
        lan_ = listen_on(SOCK_STREAM, cfg_.lan_ipv4, port, "LAN");
        try {
            udp_ = listen_on(SOCK_DGRAM, cfg_.lan_ipv4, port, "liveness (UDP)");
            cfg_.lan_port = port;
            break;
        } catch (const std::runtime_error&) {
            if (cfg_.lan_port != 0 || attempt == 20) {
                throw;
            }
        }
    }
    wan_ = listen_on(SOCK_STREAM, cfg_.wan_ipv4, cfg_.wan_port, "WAN");
    loop_.add(lan_.get(), EPOLLIN, &lan_handler_);
    loop_.add(wan_.get(), EPOLLIN, &wan_handler_);
    loop_.add(udp_.get(), EPOLLIN, &udp_handler_);
    return ipv4_text(cfg_.lan_ipv4) + ":" + std::to_string(cfg_.lan_port);
}

// Blocking, before anything else is served: the relay has no job to serve
// until the server accepted it.
void daemon::join_server(clock::time_point deadline)
{
    auto fd = impi::connect_to(cfg_.server, deadline);
    server_ = std::make_unique<impi::Channel>(std::move(fd), impi::Sender::server, "impi-server at " + cfg_.server);
    const std::string& secret = *cfg_.credentials.secret;
    server_->send(impi::cmd::auth, impi::Writer().u32(1u << impi::auth_method::hashi_hmac).take());
    auto expect = [&](std::uint32_t command, const char* step) {
        auto r = server_->receive(deadline);
        if (r.status != impi::Channel::Received::Status::frame) {
            throw std::runtime_error("impi-server at " + cfg_.server + " did not answer (" + step + ")" +
                (r.error.empty() ? "" : ": " + r.error));
        }
        if (r.frame.command == impi::cmd::hx_error) {
            auto text = impi::decode_text(r.frame.payload);
            throw std::runtime_error("impi-server refused this relay: " + text.value_or("(no reason)"));
        }
        if (r.frame.command != command) {
            throw std::runtime_error("impi-server sent " + impi::command_name(r.frame.command) + " where " +
                impi::command_name(command) + " belongs (" + step + ")");
        }
        return std::move(r.frame);
    };
    auto answer = impi::decode_server_auth(expect(impi::cmd::auth, "authentication").payload);
    if (!answer || answer->which != impi::auth_method::hashi_hmac || answer->data.size() != impi::nonce_size) {
        throw std::runtime_error("impi-server does not offer Hashi's authentication; a relay needs the job's secret "
                                 "(give impi-server and impi-relay the same -impi-secret-file)");
    }
    impi::Nonce server_nonce {};
    std::copy(answer->data.begin(), answer->data.end(), server_nonce.begin());
    const impi::Nonce client_nonce = impi::random_nonce();
    const auto proof = impi::client_proof(secret, server_nonce, client_nonce);
    server_->send(impi::cmd::auth, impi::Writer().bytes(client_nonce).bytes(proof).take());
    auto theirs = impi::decode_server_auth(expect(impi::cmd::auth, "the server's proof").payload);
    if (!theirs || !impi::same_mac(theirs->data, impi::server_proof(secret, server_nonce, client_nonce))) {
        throw std::runtime_error("the process at " + cfg_.server +
            " could not prove it holds the job's secret (not our impi-server, or another secret)");
    }
    impi::RelayInfo me {.cluster = cfg_.cluster,
        .id = cfg_.id,
        .count = cfg_.count,
        .lan_ipv4 = cfg_.lan_ipv4,
        .lan_port = cfg_.lan_port,
        .wan_ipv4 = cfg_.wan_ipv4,
        .wan_port = cfg_.wan_port};
    std::string error;
    if (!server_->send(impi::cmd::hx_relay_join, impi::encode_relay_info(me), error)) {
        throw std::runtime_error("cannot join impi-server: " + error);
    }
    loop_.add(server_->fd(), EPOLLIN, &server_handler_);
    log("joined impi-server at " + cfg_.server + " as " + impi::describe(me));
}

void daemon::on_server_readable()
{
    std::string error;
    auto st = server_->read_available(error);
    while (st == impi::Channel::Status::ok && !result_) {
        auto f = server_->next_frame(error);
        if (!error.empty()) {
            fail("impi-server sent a malformed message: " + error);
            return;
        }
        if (!f) {
            return;
        }
        on_server_frame(*f);
    }
    if (st != impi::Channel::Status::ok && result_) {
        loop_.remove(server_->fd()); // the server told everyone and is done with us
        server_->close();
    } else if (st != impi::Channel::Status::ok) {
        loop_.remove(server_->fd());
        server_->close();
        log("error: the connection to impi-server at " + cfg_.server +
            (st == impi::Channel::Status::closed ? " closed" : " failed: " + error) + " before the job ended");
        result_ = 1;
    }
}

void daemon::on_server_frame(const impi::Frame& f)
{
    std::string error;
    if (f.command == impi::cmd::hx_relay_table && !key_) {
        auto t = impi::decode_relay_table(f.payload, error);
        if (!t) {
            fail("impi-server sent a malformed relay table: " + error);
            return;
        }
        on_relay_table(*t);
    } else if (f.command == impi::cmd::fini) {
        log("the job ended; " + std::to_string(trunks_.size()) + " trunk(s) closed");
        for (auto& t : trunks_) {
            t->end(); // the other relay then takes our close for the job's end
        }
        report();
        result_ = 0;
        linger_until_ = clock::now() + linger_time;
    } else if (f.command == impi::cmd::hx_error || f.command == impi::cmd::hx_abort) {
        std::optional<std::string> text;
        if (f.command == impi::cmd::hx_error) {
            text = impi::decode_text(f.payload);
        } else {
            auto a = impi::decode_abort(f.payload);
            text = a ? a->reason : std::string("(malformed)");
        }
        log("the job failed: " + text.value_or("(no reason)"));
        report();
        result_ = 1;
        linger_until_ = clock::now() + linger_time;
    } else {
        fail("impi-server sent " + impi::command_name(f.command) + ", which a relay does not expect");
    }
}

void daemon::on_relay_table(const impi::RelayTable& t)
{
    job_id_ = t.job_id;
    const auto material = mpiexec::derive_job_key(*cfg_.credentials.secret, t.job_id);
    key_ = fi::job_key::from_hex(mpiexec::to_hex(material));
    table_ = t.relays;
    // Relay i pairs with relay (i mod G') of each other cluster, and with
    // every relay j of that cluster for which j mod G == i when the other
    // cluster has more: each relay of both clusters has a trunk, so all
    // gateways carry traffic.
    for (const auto& r : table_) {
        if (r.cluster == cfg_.cluster) {
            continue;
        }
        const bool pairs = r.id == cfg_.id % r.count || r.id % cfg_.count == cfg_.id;
        if (pairs) {
            peers_[{static_cast<std::uint16_t>(r.cluster), static_cast<std::uint16_t>(r.id)}] = r;
        }
    }
    log("job " + std::to_string(job_id_) + ": " + std::to_string(table_.size()) + " relays, " +
        std::to_string(peers_.size()) + " trunk(s) to set up");
    trunks_deadline_ = clock::now() + trunk_setup_time;
    dial_trunks();
}

void daemon::dial_trunks()
{
    for (const auto& [name, info] : peers_) {
        if (name.cluster > cfg_.cluster) {
            continue; // the higher cluster dials: we wait for it
        }
        bool have = std::any_of(
            trunks_.begin(), trunks_.end(), [&](const auto& t) { return t->peer() == name && !t->dead(); });
        if (have) {
            continue;
        }
        UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
        sockaddr_in sin {};
        sin.sin_family = AF_INET;
        sin.sin_addr.s_addr = htonl(info.wan_ipv4);
        sin.sin_port = htons(info.wan_port);
        if (!fd || (::connect(fd.get(), reinterpret_cast<sockaddr*>(&sin), sizeof sin) != 0 && errno != EINPROGRESS)) {
            fail("cannot connect a trunk to " + impi::describe(info) + ": " + std::strerror(errno));
            return;
        }
        trunks_.push_back(std::make_unique<trunk>(*this, name, true, std::move(fd)));
    }
}

trunk* daemon::trunk_to(int cluster)
{
    // Of the open trunks to that cluster, the one with the fewest streams
    // (a relay has one per relay of the other cluster it pairs with).
    trunk* best = nullptr;
    for (auto& t : trunks_) {
        if (t->peer().cluster == cluster && t->open() && (best == nullptr || t->streams() < best->streams())) {
            best = t.get();
        }
    }
    return best;
}

bool daemon::trunk_planned(int cluster) const
{
    return std::any_of(peers_.begin(), peers_.end(), [&](const auto& p) { return p.first.cluster == cluster; });
}

bool daemon::expects_trunk(const relay_name& n) const
{
    return peers_.contains(n) &&
        std::none_of(trunks_.begin(), trunks_.end(), [&](const auto& t) { return t->peer() == n && t->open(); });
}

bool daemon::may_dial(const fi::endpoint_address& to, std::string& why) const
{
    if (to.cluster_id != cfg_.cluster) {
        why = "the destination " + to.describe() + " is not in this relay's cluster " + std::to_string(cfg_.cluster);
        return false;
    }
    if ((to.ipv4 & cfg_.lan_mask) != cfg_.lan_net) {
        why = "the destination " + to.describe() + " is outside this relay's LAN " + ipv4_text(cfg_.lan_net);
        return false;
    }
    if (to.port < 1024) {
        why = "the destination " + to.describe() + " is a system port, which no rank listens on";
        return false;
    }
    return true;
}

void daemon::on_open(trunk& t, std::uint32_t id, const fi::endpoint_address& from, const fi::endpoint_address& to)
{
    std::string why;
    auto refuse = [&](wire::route_status s, const std::string& reason) {
        const auto r = reason.substr(0, max_reason);
        t.send(frame_kind::opened, id, static_cast<std::uint32_t>(s), reinterpret_cast<const std::uint8_t*>(r.data()),
            r.size());
        debug("refused a route from " + from.describe() + " to " + to.describe() + ": " + reason);
    };
    if (from.cluster_id != t.peer().cluster) {
        return refuse(wire::route_status::refused, "the source is not in the trunk's cluster");
    }
    if (!may_dial(to, why)) {
        return refuse(wire::route_status::refused, why);
    }
    if (streams_.size() >= cfg_.max_streams) {
        return refuse(wire::route_status::busy, "the relay has " + std::to_string(streams_.size()) + " streams");
    }
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    sockaddr_in sin {};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(to.ipv4);
    sin.sin_port = htons(to.port);
    if (!fd || (::connect(fd.get(), reinterpret_cast<sockaddr*>(&sin), sizeof sin) != 0 && errno != EINPROGRESS)) {
        return refuse(wire::route_status::unreachable, std::string("connect: ") + std::strerror(errno));
    }
    // As on the accepted side: a rank's small messages must not wait for
    // Nagle's acknowledgement (a ping-pong through the relay would pay a
    // delayed ACK on each reply).
    int one = 1;
    ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto s = std::make_unique<route_stream>(*this, std::move(fd), false);
    s->start_egress(&t, id, from, to);
    streams_.push_back(std::move(s));
}

void daemon::route_stream_created(std::unique_ptr<route_stream> s)
{
    streams_.push_back(std::move(s));
}

void daemon::accept_lan()
{
    for (int i = 0; i < 64; ++i) {
        sockaddr_in sin {};
        socklen_t len = sizeof sin;
        int fd = ::accept4(lan_.get(), reinterpret_cast<sockaddr*>(&sin), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            return;
        }
        if (greetings_.size() >= max_greetings) {
            // Strangers cannot crowd out the job: the oldest greeting goes.
            greetings_.erase(greetings_.begin());
        }
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        const std::string peer = ipv4_text(ntohl(sin.sin_addr.s_addr)) + ":" + std::to_string(ntohs(sin.sin_port));
        greetings_.push_back(std::make_unique<lan_greeting>(*this, UniqueFd(fd), peer));
    }
}

void daemon::accept_wan()
{
    for (int i = 0; i < 64; ++i) {
        int fd = ::accept4(wan_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            return;
        }
        if (!key_) {
            ::close(fd); // not serving yet: a real relay dials again
            continue;
        }
        // A flood of idle connections cannot keep a real relay out: when
        // too many are in their handshake, the oldest goes (trunks_ is in
        // accept order).
        std::vector<trunk*> pending;
        for (auto& t : trunks_) {
            if (t->handshaking() && !t->is_connector()) {
                pending.push_back(t.get());
            }
        }
        if (pending.size() >= max_trunk_handshakes) {
            pending.front()->fail("too many trunk connections in their handshake; the oldest is closed");
        }
        trunks_.push_back(std::make_unique<trunk>(*this, relay_name {}, false, UniqueFd(fd)));
    }
}

// A rank's liveness ping in its envelope, or a pong of a rank of this
// cluster to a ping that came through a trunk.
void daemon::on_udp()
{
    for (int i = 0; i < 64; ++i) {
        std::uint8_t buf[256];
        sockaddr_in from {};
        socklen_t flen = sizeof from;
        const ssize_t n = ::recvfrom(udp_.get(), buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &flen);
        if (n < 0) {
            return;
        }
        if (!key_) {
            ++udp_dropped_;
            continue;
        }
        const std::uint32_t src_ip = ntohl(from.sin_addr.s_addr);
        const std::uint16_t src_port = ntohs(from.sin_port);
        const auto& job = key_->material();
        wire::job_key k {};
        std::copy(job.begin(), job.end(), k.begin());
        if (static_cast<std::size_t>(n) == wire::relay_liveness_size) {
            auto env = wire::decode_relay_liveness(buf, static_cast<std::size_t>(n));
            auto* l = std::get_if<wire::relay_liveness>(&env);
            if (l == nullptr || !wire::verify_heartbeat(l->heartbeat.data(), k)) {
                ++udp_dropped_;
                continue;
            }
            // Only this cluster's ranks ping through this relay.
            if ((src_ip & cfg_.lan_mask) != cfg_.lan_net) {
                ++udp_dropped_;
                continue;
            }
            // The trunk of the stream between the rank and that target,
            // whichever of the two dialed it (a rank's liveness socket has
            // its listener's address, so the datagram's source names the
            // rank); without one (the rank waits on a peer that has not
            // connected yet), this relay's trunk to the target's cluster.
            // The MAC proved the ping is the job's; the other relay passes
            // it only to an address of its own cluster.
            trunk* t = nullptr;
            for (auto& s : streams_) {
                if (!s->closed() && s->joins(src_ip, src_port, l->to_ipv4, l->to_port)) {
                    t = s->via();
                    break;
                }
            }
            if (t == nullptr && l->to_cluster != cfg_.cluster) {
                t = trunk_to(l->to_cluster);
            }
            if (t == nullptr || !t->open()) {
                ++udp_dropped_;
                continue;
            }
            heartbeat_route r {src_ip, src_port, l->to_ipv4, l->to_port};
            std::uint8_t payload[heartbeat_route_size + liveness_datagram_size];
            const auto rb = encode(r);
            std::copy(rb.begin(), rb.end(), payload);
            std::copy(l->heartbeat.begin(), l->heartbeat.end(), payload + heartbeat_route_size);
            t->send(frame_kind::heartbeat, 0, 0, payload, sizeof payload);
        } else if (static_cast<std::size_t>(n) == wire::heartbeat_size) {
            // A pong: back to the trunk the ping came from.
            if (!wire::verify_heartbeat(buf, k)) {
                ++udp_dropped_;
                continue;
            }
            const std::uint8_t* challenge = buf + 24;
            auto it = std::find_if(pongs_.begin(), pongs_.end(), [&](const pending_pong& p) {
                return p.target_ipv4 == src_ip && p.target_port == src_port &&
                    std::equal(p.challenge.begin(), p.challenge.end(), challenge);
            });
            if (it == pongs_.end()) {
                ++udp_dropped_;
                continue;
            }
            for (auto& t : trunks_) {
                if (t->peer() == it->back && t->open()) {
                    std::uint8_t payload[heartbeat_route_size + liveness_datagram_size];
                    const auto rb = encode(it->route);
                    std::copy(rb.begin(), rb.end(), payload);
                    std::copy(buf, buf + wire::heartbeat_size, payload + heartbeat_route_size);
                    t->send(frame_kind::heartbeat, 0, 1, payload, sizeof payload);
                    break;
                }
            }
            pongs_.erase(it);
        } else {
            ++udp_dropped_;
        }
    }
}

void daemon::on_heartbeat(trunk& t, std::uint32_t direction, const heartbeat_route& r, const std::uint8_t* datagram)
{
    const auto& job = key_->material();
    wire::job_key k {};
    std::copy(job.begin(), job.end(), k.begin());
    if (!wire::verify_heartbeat(datagram, k)) {
        t.fail("a heartbeat with a bad MAC came through the trunk");
        return;
    }
    sockaddr_in to {};
    to.sin_family = AF_INET;
    if (direction == 0) {
        // Towards a rank of this cluster: remember where its pong goes.
        fi::endpoint_address target;
        target.cluster_id = static_cast<std::uint16_t>(cfg_.cluster);
        target.ipv4 = r.target_ipv4;
        target.port = r.target_port;
        std::string why;
        if (!may_dial(target, why)) {
            ++udp_dropped_;
            return;
        }
        if (pongs_.size() >= max_pending_pongs) {
            pongs_.pop_front();
        }
        pending_pong p {r.target_ipv4, r.target_port, {}, t.peer(), r, clock::now() + pong_lifetime};
        std::copy(datagram + 24, datagram + 40, p.challenge.begin());
        pongs_.push_back(p);
        to.sin_addr.s_addr = htonl(r.target_ipv4);
        to.sin_port = htons(r.target_port);
    } else {
        to.sin_addr.s_addr = htonl(r.origin_ipv4);
        to.sin_port = htons(r.origin_port);
        if ((r.origin_ipv4 & cfg_.lan_mask) != cfg_.lan_net) {
            ++udp_dropped_;
            return;
        }
    }
    ::sendto(udp_.get(), datagram, wire::heartbeat_size, 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
}

void daemon::pace_trunks()
{
    if (cfg_.wan_rate == 0) {
        return; // unpaced: the kernel's default, nothing to lift
    }
    const auto rate = trunk_pacing_.rate();
    const auto sending = trunk_pacing_.sending();
    const std::string why = "--wan-rate " + std::to_string(cfg_.wan_rate * 8 / 1000000) + " Mbit/s" +
        (sending > 1 ? " over " + std::to_string(sending) + " sending trunks" : std::string()) + ", 92 % of it payload";
    for (auto& t : trunks_) {
        if (t->open()) {
            t->pace(rate, why);
        }
    }
}

void daemon::trunk_writing(trunk& t, std::size_t bytes)
{
    if (cfg_.wan_rate == 0) {
        return; // unpaced: nothing to split, no clock to read per write
    }
    if (trunk_pacing_.writing(&t, t.fd(), bytes, now_ns())) {
        pace_trunks();
    }
}

void daemon::expire_trunk_pacing()
{
    const std::uint64_t next = trunk_pacing_.next_expiry();
    if (next == 0) {
        return;
    }
    const std::uint64_t now = now_ns();
    if (now < next) {
        return;
    }
    const bool changed = trunk_pacing_.expire(now, [this](const void* key, int fd) -> std::size_t {
        for (const auto& t : trunks_) {
            if (t.get() == key && t->fd() == fd && t->open()) {
                return t->unsent();
            }
        }
        return 0; // gone or closed: its part is free
    });
    if (changed) {
        pace_trunks();
    }
}

void daemon::trunk_failed(trunk& t, const std::string& why)
{
    fail(t.describe() + ": " + why);
}

void daemon::fail(const std::string& why)
{
    if (result_) {
        return;
    }
    log("error: " + why + "; the job is aborted");
    if (server_ && server_->open()) {
        std::string ignored;
        server_->send(impi::cmd::hx_abort,
            impi::encode_abort({cfg_.cluster, 1, "impi-relay " + std::to_string(cfg_.id) + " of cluster " +
                                                     std::to_string(cfg_.cluster) + ": " + why}),
            ignored, std::chrono::seconds(2));
    }
    report();
    result_ = 1;
    // The ranks' streams stay open (stalled) until the server has told
    // every cluster why: it closes this relay's connection once it has, or
    // linger_time passes. Closing them first would let the ranks die of a
    // "lost peer" before their mpiexec hears which relay or trunk it was.
    linger_until_ = clock::now() + linger_time;
}

void daemon::tick()
{
    const auto now = clock::now();
    for (auto& t : trunks_) {
        t->tick(now);
    }
    for (auto& s : streams_) {
        s->tick(now);
    }
    for (auto& g : greetings_) {
        g->tick(now);
    }
    if (now >= next_stats_ && !cfg_.stats_dir.empty()) {
        sample_trunks();
        write_stats();
        next_stats_ = now + std::chrono::seconds(2);
    }
    while (!pongs_.empty() && pongs_.front().expires < now) {
        pongs_.pop_front();
    }
    if (key_ && !result_ && trunks_deadline_ != clock::time_point::max() && now >= next_dial_) {
        next_dial_ = now + std::chrono::milliseconds(200);
        dial_trunks(); // those that are not up (yet) or failed before they were
    }
    if (key_ && !result_ && now > trunks_deadline_) {
        for (const auto& [name, info] : peers_) {
            bool up = std::any_of(trunks_.begin(), trunks_.end(), [&](const auto& t) { return t->peer() == name && t->open(); });
            if (!up) {
                fail("the trunk to " + impi::describe(info) + " is not up after " +
                    std::to_string(trunk_setup_time.count()) + " s (is that relay running, is its WAN address reachable?)");
                return;
            }
        }
        trunks_deadline_ = clock::time_point::max();
    }
}

void daemon::reap()
{
    std::erase_if(streams_, [](const auto& s) { return s->closed(); });
    std::erase_if(greetings_, [](const auto& g) { return g->closed(); });
    std::erase_if(trunks_, [this](const auto& t) {
        if (!t->dead() || result_) {
            return false;
        }
        if (trunk_pacing_.forget(t.get(), t->fd())) {
            pace_trunks(); // a trunk that dies ends the job: the others' part, meanwhile
        }
        return true;
    });
}

// One line per trunk, whitespace-separated, for scripts and monitoring;
// written to a temporary name and renamed, so a reader never sees half.
void daemon::sample_trunks()
{
    for (auto& t : trunks_) {
        t->sample_tcp(); // a closed trunk keeps its last look
    }
}

void daemon::write_stats() const
{
    if (cfg_.stats_dir.empty()) {
        return;
    }
    const std::string name = cfg_.stats_dir + "/relay-" + std::to_string(cfg_.cluster) + "." + std::to_string(cfg_.id);
    const std::string tmp = name + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "w");
    if (f == nullptr) {
        return;
    }
    std::fprintf(f, "# impi-relay %d of cluster %d job %llu; liveness datagrams dropped %llu\n", cfg_.id,
        cfg_.cluster, static_cast<unsigned long long>(job_id_), static_cast<unsigned long long>(udp_dropped_));
    // The last six columns are the kernel's (TCP_INFO): retransmitted
    // segments and retransmission timeouts over the trunk's life (rtos -1:
    // a kernel before 6.7 does not count them), the congestion window in
    // segments, the smoothed round trip, the rate the kernel paces at now
    // and the limit --wan-rate set (bytes/s; 0: none).
    std::fprintf(f, "# peer_cluster peer_relay up bytes_out frames_out bytes_in frames_in streams streams_opened "
                    "streams_refused heartbeats queue peak_queue retrans rtos cwnd srtt_us pacing_rate "
                    "max_pacing_rate\n");
    for (const auto& t : trunks_) {
        const auto& c = t->counters();
        const auto& k = t->tcp();
        std::fprintf(f, "%u %u %d %llu %llu %llu %llu %zu %llu %llu %llu %zu %zu %llu %lld %llu %llu %llu %llu\n",
            t->peer().cluster, t->peer().relay, t->open() ? 1 : 0, static_cast<unsigned long long>(c.bytes_out),
            static_cast<unsigned long long>(c.frames_out), static_cast<unsigned long long>(c.bytes_in),
            static_cast<unsigned long long>(c.frames_in), t->streams(), static_cast<unsigned long long>(c.streams_opened),
            static_cast<unsigned long long>(c.streams_refused), static_cast<unsigned long long>(c.heartbeats),
            t->queued(), c.peak_queue, static_cast<unsigned long long>(k.total_retrans),
            k.rtos_known ? static_cast<long long>(k.rtos) : -1LL, static_cast<unsigned long long>(k.cwnd),
            static_cast<unsigned long long>(k.srtt_us), static_cast<unsigned long long>(k.pacing_rate),
            static_cast<unsigned long long>(k.max_pacing_rate));
    }
    const bool ok = std::fclose(f) == 0;
    if (ok) {
        std::rename(tmp.c_str(), name.c_str());
    }
}

void daemon::report()
{
    sample_trunks();
    write_stats();
    for (const auto& t : trunks_) {
        const auto& c = t->counters();
        log(t->describe() + ": " + std::to_string(c.bytes_out) + " bytes / " + std::to_string(c.frames_out) +
            " frames out, " + std::to_string(c.bytes_in) + " bytes / " + std::to_string(c.frames_in) + " frames in, " +
            std::to_string(c.streams_opened) + " streams opened, " + std::to_string(c.streams_refused) +
            " refused, " + std::to_string(c.heartbeats) + " heartbeats, peak queue " + std::to_string(c.peak_queue) +
            " bytes; TCP: " + std::to_string(t->tcp().total_retrans) + " segments retransmitted, round trip " +
            std::to_string(t->tcp().srtt_us) + " us, pacing limit " +
            (t->tcp().max_pacing_rate != 0 ? std::to_string(t->tcp().max_pacing_rate) + " bytes/s" : std::string("none")));
    }
    if (udp_dropped_ != 0) {
        log(std::to_string(udp_dropped_) + " liveness datagrams dropped (no route, bad MAC, unknown pong)");
    }
    // What forwarding cost this relay's host: with the trunk's byte and
    // frame counts above, the CPU per byte and per frame, which bound what
    // one gateway core carries (bench/relay/run-relay divides them).
    rusage ru {};
    if (::getrusage(RUSAGE_SELF, &ru) == 0) {
        auto secs = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
        char text[160];
        std::snprintf(text, sizeof text, "CPU used: %.3f s user, %.3f s system, %llu wakeups", secs(ru.ru_utime),
            secs(ru.ru_stime), static_cast<unsigned long long>(loop_.wakeups()));
        log(text);
    }
}

int daemon::run(int stop_fd)
{
    join_server(clock::now() + cfg_.startup_timeout);
    struct stopper : event_handler {
        std::optional<int>& result;
        daemon& d;
        stopper(std::optional<int>& r, daemon& dd) : result(r), d(dd) { }
        void on_events(std::uint32_t) override
        {
            d.fail("impi-relay was stopped by a signal");
        }
    } stop_handler {result_, *this};
    loop_.add(stop_fd, EPOLLIN, &stop_handler);
    auto next_tick = clock::now();
    while (!result_) {
        // Within the 100 ms of a tick, and sooner when a sending trunk's
        // part may come free.
        int wait_ms = 100;
        if (const std::uint64_t next = trunk_pacing_.next_expiry(); next != 0) {
            const std::uint64_t now = now_ns();
            wait_ms = next <= now ? 0 : static_cast<int>(std::min<std::uint64_t>((next - now + 999'999) / 1'000'000, 100));
        }
        loop_.wait(wait_ms);
        expire_trunk_pacing();
        if (clock::now() >= next_tick) {
            tick();
            next_tick = clock::now() + std::chrono::milliseconds(100);
        }
        reap();
    }
    loop_.remove(stop_fd);
    // The job is over or failed: the control connections this relay carries
    // still bring the server's last word to their mpiexec, and the ranks'
    // streams stay open, until the server closed this relay's connection
    // and those connections, or linger_time passes.
    auto carrying = [this] {
        return std::any_of(greetings_.begin(), greetings_.end(), [](const auto& g) { return !g->closed(); });
    };
    while (clock::now() < linger_until_ && ((server_ && server_->open()) || carrying())) {
        loop_.wait(50);
        reap();
    }
    return *result_;
}

} // namespace hashi::relay
