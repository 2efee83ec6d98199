// SPDX-License-Identifier: BSD-3-Clause
// Making and ending paths (path_manager.hpp): lazy non-blocking connects,
// accepting with bounds, the loopback pair to self, reading the handshake's
// frames, and closing. The handshake's messages are in path/handshake.cpp.
#include "transport/path/path_manager.hpp"

#include "transport/common.hpp"
#include "transport/path/stream_parser.hpp"
#include "transport/secure/key_schedule.hpp"
#include "transport/secure/open_stream.hpp"
#include "transport/tcp_telemetry.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace hashi::fi {

namespace {

void set_nodelay(int fd)
{
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// The handshake's frames are small; a path reads them with this buffer.
constexpr std::size_t handshake_rx_buffer = 4096;

} // namespace

path_manager::path_manager(progress_loop& loop, peer_table& peers, const router& routes, const job_key& key,
    const endpoint_identity& self, protection_policy protect, path_owner& owner, path_events& up)
    : loop_(loop), peers_(peers), routes_(routes), key_(key), self_(self), protect_(protect), owner_(owner), up_(up)
{
}

path_manager::~path_manager()
{
    listen_reg_.reset();
    if (listen_fd_ >= 0)
        ::close(listen_fd_);
}

void path_manager::listen(int listen_fd)
{
    listen_fd_ = listen_fd;
    listen_reg_ = loop_.watch(listen_fd_, this, EPOLLIN);
}

path& path_manager::add_path(int fd, bool outgoing)
{
    paths_.push_back(std::make_unique<path>(fd, outgoing, owner_));
    return *paths_.back();
}

namespace {

bool same_endpoint(const sockaddr_in& x, const sockaddr_in& y)
{
    return x.sin_addr.s_addr == y.sin_addr.s_addr && x.sin_port == y.sin_port;
}

// The connection from `from` that `l` holds; a stranger's, which may come
// first on a loopback port, is closed. -1 with errno.
int accept_from(int l, int from)
{
    sockaddr_in mine {};
    socklen_t len = sizeof mine;
    if (::getsockname(from, reinterpret_cast<sockaddr*>(&mine), &len) != 0)
        return -1;
    for (int tries = 0; tries < 8; ++tries) {
        sockaddr_in peer {};
        len = sizeof peer;
        const int c = ::accept4(l, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (c < 0 || same_endpoint(peer, mine))
            return c;
        ::close(c);
    }
    errno = ECONNREFUSED;
    return -1;
}

// A connected pair over 127.0.0.1, both ends non-blocking; false with errno.
bool tcp_loopback_pair(int sv[2])
{
    sockaddr_in a {};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    const int l = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    bool ok = l >= 0 && ::bind(l, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && ::listen(l, 1) == 0 &&
        ::getsockname(l, reinterpret_cast<sockaddr*>(&a), &len) == 0;
    sv[0] = ok ? ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0) : -1;
    ok = ok && sv[0] >= 0 && ::connect(sv[0], reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    sv[1] = ok ? accept_from(l, sv[0]) : -1;
    ok = ok && sv[1] >= 0 && ::fcntl(sv[0], F_SETFL, O_NONBLOCK) == 0;
    const int e = errno;
    if (l >= 0)
        ::close(l);
    if (!ok) {
        for (int i = 0; i < 2; ++i)
            if (sv[i] >= 0)
                ::close(sv[i]);
        errno = e;
    }
    return ok;
}

} // namespace

void path_manager::setup_self(peer& self, bool tcp)
{
    // Sends to ourselves go through a socket pair, so they take exactly the
    // same path (framing, matching, rendezvous) as sends to anyone else.
    int sv[2];
    if (tcp ? !tcp_loopback_pair(sv) : ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0)
        throw std::runtime_error(std::string("socket pair for sends to self: ") + std::strerror(errno));
    self.host = self_.host;
    self.pid = static_cast<std::uint32_t>(getpid());
    path& tx = add_path(sv[0], true);
    path& rx = add_path(sv[1], false);
    tx.st = rx.st = path::state::open;
    tx.p = rx.p = &self;
    rx.rx_only = true;
    tx.watch(loop_, false, false);
    rx.watch(loop_, true, false);
    self.paths.push_back(&tx);
    up_.path_readable(rx);
}

void path_manager::ensure_lanes(peer& p, std::size_t lanes)
{
    p.lanes_dialed = true;
    if (!p.connected() || p.failed || closing_)
        return;
    for (std::size_t k = 1; k < lanes && k < wire::max_lanes; ++k) {
        const auto lane = static_cast<std::uint8_t>(k);
        if (!p.lane_busy(lane) && !p.lane_given_up[k])
            dial(p, lane);
    }
}

void path_manager::dial(peer& p, std::uint8_t lane)
{
    if (lane == 0)
        p.redial_pending = false;
    const route r = routes_.route_for(p, lane);
    if (r.how == route::kind::unreachable) {
        peers_.fail(p, router::unreachable_reason(p.addr), closing_);
        return;
    }
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        peers_.fail(p, std::string("cannot create a socket: ") + std::strerror(errno), closing_);
        return;
    }
    set_nodelay(fd);
    sockaddr_in sin {};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(r.ipv4);
    sin.sin_port = htons(r.port);
    path& c = add_path(fd, true);
    c.p = &p;
    c.lane = lane;
    c.st = path::state::dialing;
    (lane == 0 ? p.dialing : p.lane_dialing[lane]) = &c;
    if (r.how == route::kind::relay) {
        c.relay.active = true;
        c.relay.ipv4 = r.ipv4;
        c.relay.port = r.port;
        c.relay.trunk = r.trunk;
        c.relay.deadline_ns = monotonic_ns() + route_timeout_ns;
        loop_.at(c.relay.deadline_ns + 1, [this] { expire_routes(); });
    }
    const int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin);
    const int connect_errno = errno;
    c.watch(loop_, true, true);
    if (c.relay.active)
        HASHI_DEBUG("connecting to %s through %s", p.describe().c_str(), relay_name(c).c_str());
    else
        HASHI_DEBUG("connecting to %s", p.describe().c_str());
    if (rc != 0 && connect_errno != EINPROGRESS)
        connect_failed(c, connect_errno);
}

void path_manager::connect_failed(path& c, int err)
{
    if (c.relay.active)
        failed(c, "cannot connect to " + relay_name(c) + ": " + std::strerror(err) +
                " (is impi-relay running on this cluster's gateway, at the address mpiexec gave in " +
                relays_variable + "?)");
    else
        failed(c, std::string("cannot connect: ") + std::strerror(err));
}

void path_manager::pause_accepting()
{
    // Out of descriptors (or memory): stop looking at the listening socket
    // for a while instead of spinning on it; established paths go on, and
    // pending connectors wait in the kernel's accept queue.
    listen_reg_.want(0);
    loop_.at(monotonic_ns() + 100'000'000ull, [this] { listen_reg_.want(EPOLLIN); });
}

void path_manager::on_events(std::uint32_t /*events*/)
{
    for (;;) {
        const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                accept_failures_.warn("cannot accept connections: %s; trying again in 100 ms (raise ulimit -n?)",
                    std::strerror(errno));
                pause_accepting();
            } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED) {
                accept_failures_.warn("accept: %s", std::strerror(errno));
            }
            return;
        }
        if (handshakes_inbound_ >= max_inbound_handshakes)
            evict_oldest_handshake();
        set_nodelay(fd);
        path& c = add_path(fd, false);
        c.st = path::state::await_hello;
        c.hs_deadline_ns = monotonic_ns() + handshake_timeout_ns;
        ++handshakes_inbound_;
        c.watch(loop_, true, false);
        if (!expiry_timer_)
            expire_handshakes();
    }
}

void path_manager::connected(path& c)
{
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(c.fd(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
        connect_failed(c, err);
        return;
    }
    if (c.relay.active)
        send_route_request(c); // the ordinary hello follows once the relay has made the route
    else
        send_hello(c);
}

void path_manager::handshake_events(path& c, std::uint32_t events)
{
    if (c.st == path::state::closed)
        return;
    if (c.st == path::state::dialing) {
        if ((events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) != 0)
            connected(c);
        return;
    }
    if (c.securing) {
        if ((events & EPOLLOUT) != 0 && !c.hs_out.empty() && !flush_handshake(c))
            return;
        if (c.ack_pending) {
            // The connector's hello_ack comes first, in the clear.
            if ((events & (EPOLLIN | EPOLLERR | EPOLLHUP)) != 0)
                read_handshake(c);
            return;
        }
        advance_stream(c);
        return;
    }
    if ((events & (EPOLLIN | EPOLLERR | EPOLLHUP)) != 0) {
        if (c.st == path::state::await_route_challenge || c.st == path::state::await_route_result)
            read_route(c); // reads the handshake too once the route is made
        else
            read_handshake(c);
    }
    if (c.st != path::state::closed && (events & EPOLLOUT) != 0 && !c.hs_out.empty())
        flush_handshake(c);
}

void path_manager::advance_stream(path& c)
{
    if (c.st != path::state::open || !c.securing)
        return;
    // The stream starts right after our last handshake byte and the peer's:
    // our own bytes must be on the wire, and the connector must have read
    // the acceptor's hello_ack (read_handshake reads no byte past it).
    if (!c.hs_out.empty() && !flush_handshake(c))
        return;
    if (c.ack_pending)
        return;
    if (!c.stream) {
        std::string err;
        c.stream = secure::open_stream(c.fd(), c.protect,
            c.outgoing() ? secure::stream_role::connector : secure::stream_role::acceptor, key_.material(),
            secure::transcript_binding(c.hs), err);
        if (!c.stream) {
            failed(c, "cannot protect the connection: " + err);
            return;
        }
        ++protected_paths_;
    }
    switch (c.stream->handshake()) {
    case secure::handshake_status::done:
        HASHI_DEBUG("connection to %s protected: %s: %s", c.p->describe().c_str(), secure::protection_name(c.protect),
            c.stream->describe().c_str());
        c.securing = false;
        c.want_write(false);
        ready(c);
        return;
    case secure::handshake_status::want_read:
        c.want_write(false);
        return;
    case secure::handshake_status::want_write:
        c.want_write(true);
        return;
    case secure::handshake_status::failed:
        failed(c, "the protected stream's handshake failed: " + c.stream->error());
        return;
    }
}

// The path carries frames both ways from now on.
void path_manager::ready(path& c)
{
    peer& p = *c.p;
    up_.path_readable(c);
    if (c.st == path::state::open)
        up_.path_open(p, c);
}

bool path_manager::flush_handshake(path& c)
{
    std::string err;
    if (c.flush_handshake(err)) {
        if (c.st != path::state::open)
            c.want_write(false);
        return true;
    }
    if (!err.empty())
        failed(c, err);
    return false;
}

// Reads and acts on handshake frames until the handshake is done; then the
// path is the receive backend's, bytes already buffered included.
bool path_manager::read_handshake(path& c)
{
    if (c.rx.empty())
        c.rx.resize(handshake_rx_buffer);
    while (c.st != path::state::closed && !c.attached) {
        const std::size_t avail = c.tail - c.head;
        auto pf = parse_frame(&c.rx[c.head], avail, true);
        if (pf.st == parsed_frame::status::error) {
            failed(c, pf.error);
            return true;
        }
        if (pf.st == parsed_frame::status::frame) {
            if (!expected_handshake_frame(c, pf.h.type)) {
                const std::string why = std::string("unexpected ") + wire::frame_type_name(pf.h.type) +
                    " frame before the handshake was done";
                if (c.p == nullptr)
                    refuse(c, why.c_str());
                else
                    failed(c, why);
                return true;
            }
            if (avail >= pf.need) {
                const std::uint8_t* payload = &c.rx[c.head + wire::header_size];
                c.head += pf.need;
                on_handshake_frame(c, pf.h, payload);
                if (c.st == path::state::open && !c.ack_pending && c.p != nullptr) {
                    if (c.securing)
                        advance_stream(c);
                    else
                        up_.path_readable(c);
                    return true;
                }
                continue;
            }
        }
        // Need more bytes.
        const std::size_t need = pf.st == parsed_frame::status::frame ? pf.need : wire::header_size;
        if (c.rx.size() < need)
            c.rx.resize(need);
        if (c.head > 0) {
            std::memmove(c.rx.data(), c.rx.data() + c.head, avail);
            c.head = 0;
            c.tail = avail;
        }
        // Exactly what the frame needs, never more: a protected stream
        // starts right after the last handshake frame, and its bytes are
        // the stream's, not ours.
        switch (fill_exactly(c, need)) {
        case fill_result::got:
            continue;
        case fill_result::blocked:
            return false;
        case fill_result::closed:
            return true;
        }
    }
    return false;
}

path_manager::fill_result path_manager::fill_exactly(path& c, std::size_t need)
{
    for (;;) {
        const ssize_t r = ::recv(c.fd(), c.rx.data() + c.tail, need - c.tail, 0);
        if (r > 0) {
            c.tail += static_cast<std::size_t>(r);
            return fill_result::got;
        }
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return fill_result::blocked;
        handshake_closed(c, r == 0 ? std::string("connection closed") : std::string(std::strerror(errno)));
        return fill_result::closed;
    }
}

void path_manager::close(path& c)
{
    if (!c.outgoing() && (c.st == path::state::await_hello || c.st == path::state::await_proof))
        --handshakes_inbound_;
    // An established connection's last TCP_INFO, while the socket is still
    // there: the statistics written after it closed keep its counts.
    if (c.p != nullptr && c.fd() >= 0 && std::find(c.p->paths.begin(), c.p->paths.end(), &c) != c.p->paths.end())
        if (const auto last = read_tcp_telemetry(c.fd()))
            c.p->closed_tcp.retire(*last);
    c.close();
    if (c.p != nullptr) {
        std::erase(c.p->paths, &c);
        if (c.p->dialing == &c)
            c.p->dialing = nullptr;
        if (c.p->lane_dialing[c.lane] == &c)
            c.p->lane_dialing[c.lane] = nullptr;
    }
}

void path_manager::give_up_lane(path& c, const std::string& why)
{
    peer& p = *c.p;
    p.lane_given_up[c.lane] = true;
    if (!closing_)
        log_warn("stripe lane %u to %s not made (%s); its large messages take the other lanes", c.lane,
            p.describe().c_str(), why.c_str());
    c.p = nullptr;
    if (p.lane_dialing[c.lane] == &c)
        p.lane_dialing[c.lane] = nullptr;
    close(c);
}

void path_manager::failed(path& c, const std::string& why)
{
    peer* p = c.p;
    // A stripe lane still in its handshake (or route) is not the peer's
    // only way: lane 0 is open. Once open, a lane that breaks fails the
    // peer like any path (what it carried is lost).
    if (p != nullptr && c.lane != 0 && std::find(p->paths.begin(), p->paths.end(), &c) == p->paths.end())
        return give_up_lane(c, why);
    close(c);
    if (p != nullptr)
        up_.path_failed(c, why);
    else
        refusals_.warn("dropped an incoming connection before its handshake: %s", why.c_str());
}

void path_manager::reap()
{
    std::erase_if(paths_, [](const std::unique_ptr<path>& c) { return c->st == path::state::closed; });
}

} // namespace hashi::fi
