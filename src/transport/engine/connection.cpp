// SPDX-License-Identifier: BSD-3-Clause
// The TCP engine of an endpoint: lazy non-blocking connects, the handshake
// (which checks the job and the endpoint the connector meant), resolution of
// simultaneous connects, the receive state machine that cuts the byte stream
// into frames, vectored writes of the per-peer send queues, and failure
// handling that names the peer.
//
// One TCP connection carries both directions between two endpoints. When
// both connect at once, the connection opened by the endpoint with the
// smaller address wins; both sides decide this from the same two addresses,
// so they agree without another round trip. Frames only flow once the
// handshake is done, so nothing is ever sent on the losing connection.
#include "transport/endpoint.hpp"

#include <arpa/inet.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace hashi::fi {

namespace {

constexpr std::size_t initial_rx_buffer = 64 * 1024;
// Receive system calls per connection and progress call; the rest waits for
// the next call so one busy peer cannot starve the others.
constexpr int reads_per_event = 16;

void set_nodelay(int fd)
{
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

} // namespace

void endpoint::setup_self()
{
    // Sends to ourselves go through a socket pair, so they take exactly the
    // same path (framing, matching, rendezvous) as sends to anyone else.
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0)
        throw std::runtime_error(std::string("socketpair for sends to self: ") + std::strerror(errno));
    auto self = std::make_unique<peer>();
    self->addr = self_addr_;
    self->key = self_key_;
    self->is_self = true;
    self->host = host_;
    self->pid = static_cast<std::uint32_t>(getpid());
    auto tx = std::make_unique<connection>();
    tx->fd = sv[0];
    tx->st = connection::state::open;
    tx->p = self.get();
    auto rx = std::make_unique<connection>();
    rx->fd = sv[1];
    rx->st = connection::state::open;
    rx->p = self.get();
    rx->rx_only = true;
    self->conn = tx.get();
    for (auto* c : {tx.get(), rx.get()}) {
        epoll_event ev {};
        ev.events = c->rx_only ? std::uint32_t {EPOLLIN} : 0u;
        ev.data.ptr = c;
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, c->fd, &ev);
    }
    conns_.push_back(std::move(tx));
    conns_.push_back(std::move(rx));
    peers_.emplace(self_key_, std::move(self));
}

peer& endpoint::peer_by_address(const endpoint_address& a)
{
    const auto key = a.encode();
    auto it = peers_.find(key);
    if (it != peers_.end())
        return *it->second;
    auto p = std::make_unique<peer>();
    p->addr = a;
    p->key = key;
    // Already in the AV (it connected before we sent to it): number it now,
    // so directed receives match what it sends.
    if (auto known = av_index_.find(key); known != av_index_.end()) {
        p->fi_addr = known->second;
        if (by_index_.size() <= known->second)
            by_index_.resize(known->second + 1, nullptr);
        by_index_[known->second] = p.get();
    }
    peer& ref = *p;
    peers_.emplace(key, std::move(p));
    return ref;
}

peer* endpoint::peer_for_send(fi_addr_t dest, int& err)
{
    if (dest < by_index_.size() && by_index_[dest] != nullptr) {
        peer* p = by_index_[dest];
        if (p->failed) {
            err = -FI_EIO;
            return nullptr;
        }
        if (p->conn == nullptr && p->dialing == nullptr && p->redial_at_ns == 0)
            dial(*p);
        return p->failed ? (err = -FI_EIO, nullptr) : p;
    }
    if (av_ == nullptr || dest >= av_->entries.size()) {
        log_error("send to fi_addr %llu, which is not in the address vector (%zu entries)",
            static_cast<unsigned long long>(dest), av_ == nullptr ? std::size_t {0} : av_->entries.size());
        err = -FI_EINVAL;
        return nullptr;
    }
    peer& p = peer_by_address(av_->entries[dest]);
    if (by_index_.size() <= dest)
        by_index_.resize(dest + 1, nullptr);
    by_index_[dest] = &p;
    if (p.fi_addr == FI_ADDR_NOTAVAIL)
        p.fi_addr = dest;
    if (p.conn == nullptr && p.dialing == nullptr && !p.failed && p.redial_at_ns == 0)
        dial(p);
    if (p.failed) {
        err = -FI_EIO;
        return nullptr;
    }
    return &p;
}

void endpoint::dial(peer& p)
{
    p.redial_at_ns = 0;
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        fail_peer(p, std::string("cannot create a socket: ") + std::strerror(errno));
        return;
    }
    set_nodelay(fd);
    sockaddr_in sin {};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(p.addr.ipv4);
    sin.sin_port = htons(p.addr.port);
    auto c = std::make_unique<connection>();
    c->fd = fd;
    c->outgoing = true;
    c->p = &p;
    c->st = connection::state::dialing;
    p.dialing = c.get();
    const int r = ::connect(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin);
    epoll_event ev {};
    ev.events = EPOLLIN | EPOLLOUT;
    ev.data.ptr = c.get();
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
    c->want_write = true;
    connection& ref = *c;
    conns_.push_back(std::move(c));
    HASHI_DEBUG("connecting to %s", p.describe().c_str());
    if (r != 0 && errno != EINPROGRESS) {
        connection_failed(ref, std::string("cannot connect: ") + std::strerror(errno));
        return;
    }
}


void endpoint::accept_pending()
{
    for (;;) {
        const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                // Out of descriptors (or memory): stop looking at the
                // listening socket for a while instead of spinning on it;
                // established connections go on, and pending connectors
                // wait in the kernel's accept queue.
                accept_failures_.warn("cannot accept connections: %s; trying again in 100 ms (raise ulimit -n?)",
                    std::strerror(errno));
                ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
                listen_paused_ = true;
                listen_resume_ns_ = monotonic_ns() + 100'000'000ull;
            } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED) {
                accept_failures_.warn("accept: %s", std::strerror(errno));
            }
            return;
        }
        const std::uint64_t now = monotonic_ns();
        if (handshakes_inbound_ >= max_inbound_handshakes)
            evict_stale_handshakes(now, true);
        set_nodelay(fd);
        auto c = std::make_unique<connection>();
        c->fd = fd;
        c->st = connection::state::await_hello;
        c->hs_deadline_ns = now + handshake_timeout_ns;
        ++handshakes_inbound_;
        epoll_event ev {};
        ev.events = EPOLLIN;
        ev.data.ptr = c.get();
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
        conns_.push_back(std::move(c));
    }
}

void endpoint::arm_write(connection& c, bool on)
{
    if (c.want_write == on || c.fd < 0)
        return;
    c.want_write = on;
    epoll_event ev {};
    const bool reads = c.rx_only || c.p == nullptr || !c.p->is_self;
    ev.events = (reads ? std::uint32_t {EPOLLIN} : 0u) | (on ? std::uint32_t {EPOLLOUT} : 0u);
    ev.data.ptr = &c;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev);
}

void endpoint::close_connection(connection& c)
{
    if (c.fd >= 0) {
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.fd, nullptr);
        ::close(c.fd);
        c.fd = -1;
    }
    if (!c.outgoing && (c.st == connection::state::await_hello || c.st == connection::state::await_proof))
        --handshakes_inbound_;
    c.st = connection::state::closed;
    if (c.p != nullptr) {
        if (c.p->conn == &c)
            c.p->conn = nullptr;
        if (c.p->dialing == &c)
            c.p->dialing = nullptr;
    }
}

void endpoint::connection_failed(connection& c, const std::string& why)
{
    peer* p = c.p;
    close_connection(c);
    if (p != nullptr)
        fail_peer(*p, why);
    else
        refusals_.warn("dropped an incoming connection before its handshake: %s", why.c_str());
}

std::size_t endpoint::unsent_bytes(const connection& c) const
{
    if (c.fd < 0 || (c.p != nullptr && c.p->is_self))
        return 0;
    int n = 0;
    if (::ioctl(c.fd, SIOCOUTQ, &n) != 0)
        return 0;
    return static_cast<std::size_t>(n);
}

bool endpoint::flush_handshake(connection& c)
{
    while (c.hs_sent < c.hs_out.size()) {
        const ssize_t n = ::send(c.fd, c.hs_out.data() + c.hs_sent, c.hs_out.size() - c.hs_sent, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                arm_write(c, true);
                return false;
            }
            if (errno == EINTR)
                continue;
            connection_failed(c, std::string("handshake write: ") + std::strerror(errno));
            return false;
        }
        c.hs_sent += static_cast<std::size_t>(n);
    }
    c.hs_out.clear();
    c.hs_sent = 0;
    return true;
}

void endpoint::attach(peer& p, connection& c)
{
    if (!c.outgoing && c.st == connection::state::await_proof)
        --handshakes_inbound_;
    c.p = &p;
    c.st = connection::state::open;
    p.conn = &c;
    if (p.dialing == &c)
        p.dialing = nullptr;
    HASHI_DEBUG("connected to %s", p.describe().c_str());
    flush(p);
}

void endpoint::handle_events(connection& c, std::uint32_t events)
{
    if (c.st == connection::state::closed)
        return;
    if (c.st == connection::state::dialing) {
        if ((events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) == 0)
            return;
        int err = 0;
        socklen_t len = sizeof err;
        ::getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) {
            connection_failed(c, std::string("cannot connect: ") + std::strerror(err));
            return;
        }
        send_hello(c);
        return;
    }
    if (events & (EPOLLIN | EPOLLERR | EPOLLHUP))
        read_from(c);
    if (c.st == connection::state::closed)
        return;
    if (events & EPOLLOUT) {
        if (!c.hs_out.empty() && !flush_handshake(c))
            return;
        if (c.st == connection::state::open && c.p != nullptr && c.p->conn == &c) {
            flush(*c.p); // re-arms EPOLLOUT itself while bytes are left
        } else {
            arm_write(c, false);
        }
    }
}

bool endpoint::flush(peer& p)
{
    connection* c = p.conn;
    if (c == nullptr || c->st != connection::state::open)
        return false;
    bool moved = false;
    // Handshake bytes (the proof, the hello_ack) go before any frame.
    if (!c->hs_out.empty() && !flush_handshake(*c))
        return false;
    if (pacing_.enabled() && p.addr.cluster_id != self_addr_.cluster_id)
        pacing_.apply(c->fd, c->pacing_generation);
    while (!p.txq.empty()) {
        // Gather as many queued frames as fit in one sendmsg.
        iovec iov[64];
        int n = 0;
        std::size_t want = 0;
        for (auto it = p.txq.begin(); it != p.txq.end() && n < 64 - static_cast<int>(provider_iov_limit) - 1; ++it) {
            std::size_t skip = it->sent;
            if (skip < wire::header_size) {
                iov[n++] = {it->hdr.data() + skip, wire::header_size - skip};
                want += wire::header_size - skip;
                skip = 0;
            } else {
                skip -= wire::header_size;
            }
            for (std::size_t i = 0; i < it->iov_count; ++i) {
                const std::size_t l = it->iov[i].iov_len;
                if (skip >= l) {
                    skip -= l;
                    continue;
                }
                iov[n++] = {static_cast<std::uint8_t*>(it->iov[i].iov_base) + skip, l - skip};
                want += l - skip;
                skip = 0;
            }
        }
        msghdr mh {};
        mh.msg_iov = iov;
        mh.msg_iovlen = static_cast<std::size_t>(n);
        const ssize_t w = ::sendmsg(c->fd, &mh, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                arm_write(*c, true);
                return moved;
            }
            connection_failed(*c, std::string("write failed: ") + std::strerror(errno));
            return moved;
        }
        moved = true;
        std::size_t left = static_cast<std::size_t>(w);
        while (left > 0 || (!p.txq.empty() && p.txq.front().sent == p.txq.front().total)) {
            tx_item& t = p.txq.front();
            const std::size_t take = std::min(left, t.total - t.sent);
            t.sent += take;
            left -= take;
            if (t.sent < t.total)
                break;
            p.stats.tx_bytes += t.payload_bytes;
            op* done = t.done;
            p.txq.pop_front();
            --tx_queued_;
            if (done != nullptr)
                complete_send(*done);
        }
        if (static_cast<std::size_t>(w) < want) {
            arm_write(*c, true);
            return moved;
        }
    }
    arm_write(*c, false);
    return moved;
}

bool endpoint::read_from(connection& c)
{
    bool moved = false;
    int reads = 0;
    // A read that returned less than it asked for emptied the socket: the
    // next one would only say EAGAIN, so skip it (epoll is level-triggered
    // and reports what arrives later). Saves a system call per message.
    bool drained = false;
    if (c.rx.empty())
        c.rx.resize(initial_rx_buffer);
    while (c.st != connection::state::closed) {
        auto& s = c.sink;
        if (s.active) {
            std::size_t avail = c.tail - c.head;
            if (avail > 0) {
                const std::size_t n = std::min(avail, s.remaining);
                std::size_t off = 0;
                // Copy into the sink's iov, then drop what is to be discarded.
                for (std::size_t i = 0; i < s.iov_count && off < n; ++i) {
                    const std::size_t m = std::min(s.iov[i].iov_len, n - off);
                    if (s.checked_copy) {
                        const iovec from {&c.rx[c.head + off], m};
                        const iovec to {s.iov[i].iov_base, m};
                        if (::process_vm_writev(::getpid(), &from, 1, &to, 1, 0) != static_cast<ssize_t>(m)) {
                            connection_failed(c, "RMA write to an address that is not writable memory here");
                            return true;
                        }
                    } else {
                        std::memcpy(s.iov[i].iov_base, &c.rx[c.head + off], m);
                    }
                    s.iov[i].iov_base = static_cast<std::uint8_t*>(s.iov[i].iov_base) + m;
                    s.iov[i].iov_len -= m;
                    off += m;
                }
                c.head += n;
                s.remaining -= n;
                if (off < n)
                    s.discard -= std::min(s.discard, n - off);
            } else if (s.remaining > 0) {
                if (drained || reads++ >= reads_per_event)
                    return moved;
                // Straight from the socket into the application's memory.
                iovec iov[provider_iov_limit + 1];
                std::size_t k = 0;
                for (std::size_t i = 0; i < s.iov_count; ++i)
                    if (s.iov[i].iov_len > 0)
                        iov[k++] = s.iov[i];
                ssize_t r;
                if (k > 0) {
                    r = ::readv(c.fd, iov, static_cast<int>(k));
                } else {
                    // Bytes nobody wants (a refused RMA write): through the
                    // receive buffer and dropped.
                    r = ::recv(c.fd, c.rx.data(), std::min(c.rx.size(), s.discard), 0);
                    if (r > 0) {
                        s.discard -= static_cast<std::size_t>(r);
                        s.remaining -= static_cast<std::size_t>(r);
                        moved = true;
                        continue;
                    }
                }
                if (r == 0) {
                    connection_failed(c, "the connection closed in the middle of a frame (did the process die?)");
                    return true;
                }
                if (r < 0) {
                    if (errno == EINTR)
                        continue;
                    if (errno == EAGAIN || errno == EWOULDBLOCK)
                        return moved;
                    connection_failed(c, std::string("read failed: ") + std::strerror(errno));
                    return true;
                }
                std::size_t got = static_cast<std::size_t>(r);
                drained = got < s.remaining;
                s.remaining -= got;
                for (std::size_t i = 0; i < s.iov_count && got > 0; ++i) {
                    const std::size_t m = std::min(s.iov[i].iov_len, got);
                    s.iov[i].iov_base = static_cast<std::uint8_t*>(s.iov[i].iov_base) + m;
                    s.iov[i].iov_len -= m;
                    got -= m;
                }
            }
            moved = true;
            if (s.remaining == 0) {
                s.active = false;
                if (c.p != nullptr)
                    c.p->stats.rx_bytes += s.h.length;
                end_direct(c);
            }
            continue;
        }

        std::size_t avail = c.tail - c.head;
        std::size_t need = wire::header_size;
        if (avail >= wire::header_size) {
            auto decoded = wire::decode_header(&c.rx[c.head]);
            if (auto* e = std::get_if<wire::decode_error>(&decoded)) {
                connection_failed(c, "malformed frame: " + e->reason);
                return true;
            }
            const auto& h = std::get<wire::frame_header>(decoded);
            const bool handshake = wire::is_handshake(h.type);
            if (!expected_handshake_frame(c, h.type)) {
                const std::string why = std::string("unexpected ") + wire::frame_type_name(h.type) + " frame " +
                    (c.st == connection::state::open ? "after" : "before") + " the handshake";
                if (c.p == nullptr)
                    refuse(c, why.c_str());
                else
                    connection_failed(c, why);
                return true;
            }
            if (!handshake && h.seq != c.p->rx_seq) {
                connection_failed(c,
                    "frame out of sequence: got " + std::to_string(h.seq) + ", expected " +
                        std::to_string(c.p->rx_seq));
                return true;
            }
            const bool inline_payload =
                handshake || h.type == wire::frame_type::msg || h.type == wire::frame_type::tagged || h.length == 0;
            if (!inline_payload) {
                c.head += wire::header_size;
                ++c.p->rx_seq;
                moved = true;
                if (!begin_direct(c, h))
                    return true;
                continue;
            }
            need = wire::header_size + h.length;
            if (avail >= need) {
                const std::uint8_t* payload = &c.rx[c.head + wire::header_size];
                c.head += need;
                moved = true;
                if (handshake) {
                    on_handshake_frame(c, h, payload);
                } else {
                    ++c.p->rx_seq;
                    c.p->stats.rx_bytes += h.length;
                    if (!handle_inline_frame(c, h, payload))
                        return true;
                }
                continue;
            }
        }
        // Need more bytes: make room, then read.
        if (c.rx.size() < need)
            c.rx.resize(std::max(need, c.rx.size() * 2));
        if (c.head > 0 && (c.rx.size() - c.tail < need - avail || c.head == c.tail)) {
            std::memmove(c.rx.data(), c.rx.data() + c.head, avail);
            c.head = 0;
            c.tail = avail;
        }
        if (drained || reads++ >= reads_per_event)
            return moved;
        const std::size_t room = c.rx.size() - c.tail;
        const ssize_t r = ::recv(c.fd, c.rx.data() + c.tail, room, 0);
        if (r > 0) {
            c.tail += static_cast<std::size_t>(r);
            drained = static_cast<std::size_t>(r) < room;
            moved = true;
            continue;
        }
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return moved;
        // End of stream, or an error.
        const std::string why = r == 0 ? std::string("connection closed") : std::string(std::strerror(errno));
        if (c.p == nullptr || c.st != connection::state::open) {
            handshake_closed(c, why);
            return true;
        }
        if (avail > 0) {
            connection_failed(c, why + " in the middle of a frame (did the process die?)");
            return true;
        }
        if (c.bye_received || closing_) {
            c.eof = true;
            peer* p = c.p;
            close_connection(c);
            // Anything still queued for it cannot be delivered.
            if (p != nullptr && !p->txq.empty() && !closing_)
                fail_peer(*p, "the peer closed its endpoint with messages for it still queued");
            return true;
        }
        connection_failed(c, why + " without a goodbye (did the process die?)");
        return true;
    }
    return moved;
}

bool endpoint::progress()
{
    if (!enabled_)
        return false;
    epoll_event events[64];
    const int n = ::epoll_wait(epoll_fd_, events, 64, 0);
    bool moved = n > 0;
    if ((listen_paused_ || handshakes_inbound_ > 0 || !redial_wait_.empty()) && timers_due(monotonic_ns()))
        moved = true;
    for (int i = 0; i < n; ++i) {
        if (events[i].data.ptr == nullptr)
            accept_pending();
        else
            handle_events(*static_cast<connection*>(events[i].data.ptr), events[i].events);
    }
    std::erase_if(conns_, [](const std::unique_ptr<connection>& c) { return c->st == connection::state::closed; });
    liveness_progress(); // engine/waiting.cpp
    return moved;
}

void endpoint::fail_peer(peer& p, const std::string& why)
{
    if (p.failed)
        return;
    p.failed = true;
    p.failure = why;
    if (closing_)
        log_warn("while closing: %s: %s", p.describe().c_str(), why.c_str());
    else
        log_error("lost %s: %s", p.describe().c_str(), why.c_str());
    if (p.conn != nullptr)
        close_connection(*p.conn);
    if (p.dialing != nullptr)
        close_connection(*p.dialing);
    // Every operation that needs this peer ends with an error completion:
    // MPICH then reports the failure instead of waiting forever.
    while (!p.txq.empty()) {
        op* done = p.txq.front().done;
        p.txq.pop_front();
        --tx_queued_;
        if (done != nullptr)
            complete_error(*done, FI_EIO, 0, tx_cq_);
    }
    auto fail_map = [&](std::unordered_map<std::uint64_t, op*>& m, cq_obj* cq, bool rma) {
        for (auto it = m.begin(); it != m.end();) {
            if (it->second->p == &p) {
                op* o = it->second;
                it = m.erase(it);
                if (rma)
                    complete_rma(*o, -FI_EIO);
                else
                    complete_error(*o, FI_EIO, 0, cq);
            } else {
                ++it;
            }
        }
    };
    fail_map(rdv_sends_, tx_cq_, false);
    fail_map(rdv_recvs_, rx_cq_, false);
    fail_map(rma_ops_, tx_cq_, true);
    if (p.fi_addr != FI_ADDR_NOTAVAIL) {
        for (auto* eng : {&tagged_, &untagged_})
            for (const auto& r : eng->fail_source(p.fi_addr)) {
                op* o = reinterpret_cast<op*>(r.cookie);
                posted_.erase(o->context);
                complete_error(*o, FI_EIO, 0, rx_cq_);
            }
    }
}

} // namespace hashi::fi
