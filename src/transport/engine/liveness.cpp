// SPDX-License-Identifier: BSD-3-Clause
// The liveness thread: answers pings, pings the peers the endpoint waits on,
// and turns a silence of FI_HASHI_PEER_TIMEOUT into a verdict that the
// progress thread applies. See liveness.hpp for who owns what.
#include "common/environment.hpp"
#include "transport/engine/liveness.hpp"

#include "transport/common.hpp"
#include "transport/engine/local_address.hpp"
#include "transport/wire/relay_route.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace hashi::fi {

namespace {

using clock = peer_watch::clock;

// How often the thread looks at its peers when no datagram wakes it.
constexpr int tick_ms = 100;
// Datagrams handled per wake-up, so a flood cannot keep the thread from its
// own pings; the rest wait in the socket (and are dropped by the kernel
// when its buffer is full).
constexpr int datagrams_per_wake = 64;
// Pongs per second at most: a valid ping replayed by someone who recorded
// it can make us answer, but not at a rate that matters.
constexpr unsigned pongs_per_second = 500;
// Unanswered challenges remembered per peer: a pong to any of them counts.
constexpr std::size_t challenges_kept = 4;
// Ports tried when the UDP port next to a fresh TCP port is taken.
constexpr int bind_attempts = 16;

double seconds(clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::string fmt_seconds(clock::duration d)
{
    char b[32];
    std::snprintf(b, sizeof b, "%.1f s", seconds(d));
    return b;
}

} // namespace

struct liveness_monitor::tracked {
    watched_peer who;
    peer_watch watch;
    std::array<wire::ping_challenge, challenges_kept> challenges {};
    std::size_t next_challenge = 0;
    std::optional<clock::time_point> last_pong, last_data;
    bool reported = false;
};

std::optional<liveness_settings> read_liveness_settings(std::string& error)
{
    const auto timeout = hashi::env_whole("FI_HASHI_PEER_TIMEOUT", 15, {.hi = 86400, .base = 10}, error);
    const auto beat = timeout ? hashi::env_whole("FI_HASHI_HEARTBEAT", 3, {.hi = 3600, .base = 10}, error) : std::nullopt;
    if (!beat)
        return std::nullopt;
    if (*beat == 0) {
        error = "FI_HASHI_HEARTBEAT=0: the heartbeat interval must be at least 1 second";
        return std::nullopt;
    }
    if (*timeout != 0 && *timeout < 2 * *beat) {
        error = "FI_HASHI_PEER_TIMEOUT=" + std::to_string(*timeout) + " must be at least twice FI_HASHI_HEARTBEAT=" +
            std::to_string(*beat) + " (a peer gets several pings before it is declared dead); raise the " +
            "timeout, lower the heartbeat, or set FI_HASHI_PEER_TIMEOUT=0 to turn liveness checks off";
        return std::nullopt;
    }
    liveness_settings s;
    s.timing.timeout = std::chrono::seconds(*timeout);
    s.timing.heartbeat = std::chrono::seconds(*beat);
    return s;
}

bool bind_listener_pair(
    std::uint32_t ipv4, bool with_udp, int& tcp_fd, int& udp_fd, std::uint16_t& port, std::string& error)
{
    for (int attempt = 0; attempt < bind_attempts; ++attempt) {
        tcp_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (tcp_fd < 0) {
            error = std::string("cannot create the listening socket: ") + std::strerror(errno);
            return false;
        }
        sockaddr_in sin {};
        sin.sin_family = AF_INET;
        sin.sin_addr.s_addr = htonl(ipv4);
        socklen_t len = sizeof sin;
        if (::bind(tcp_fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin) != 0 || ::listen(tcp_fd, 1024) != 0 ||
            ::getsockname(tcp_fd, reinterpret_cast<sockaddr*>(&sin), &len) != 0) {
            char text[INET_ADDRSTRLEN] = "?";
            ::inet_ntop(AF_INET, &sin.sin_addr, text, sizeof text);
            error = std::string("cannot listen on a TCP port of ") + text + ": " + std::strerror(errno);
            ::close(tcp_fd);
            tcp_fd = -1;
            return false;
        }
        port = ntohs(sin.sin_port);
        if (!with_udp)
            return true;
        udp_fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (udp_fd < 0) {
            error = std::string("cannot create the liveness (UDP) socket: ") + std::strerror(errno);
        } else if (::bind(udp_fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin) == 0) {
            return true;
        } else {
            error = "cannot bind the liveness (UDP) socket to port " + std::to_string(port) + ": " +
                std::strerror(errno);
            ::close(udp_fd);
        }
        udp_fd = -1;
        ::close(tcp_fd);
        tcp_fd = -1;
        if (error.find("cannot create") == 0)
            return false;
    }
    error += " (tried " + std::to_string(bind_attempts) + " ports)";
    return false;
}

liveness_monitor::liveness_monitor(liveness_settings s, const wire::job_key& key, std::uint64_t self_nonce, int udp_fd)
    : settings_(s), key_(key), self_nonce_(self_nonce), udp_fd_(udp_fd)
{
    wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd_ < 0) {
        ::close(udp_fd_);
        throw std::runtime_error(std::string("eventfd for the liveness thread: ") + std::strerror(errno));
    }
    thread_ = std::thread([this] { run(); });
}

liveness_monitor::~liveness_monitor()
{
    const std::uint64_t one = 1;
    if (::write(wake_fd_, &one, sizeof one) != static_cast<ssize_t>(sizeof one))
        log_warn("cannot wake the liveness thread to stop it: %s", std::strerror(errno));
    if (thread_.joinable())
        thread_.join();
    const counters c = stats();
    HASHI_DEBUG("liveness: %llu pings, %llu pongs sent, %llu pongs received; dropped %llu malformed, %llu with a bad "
                "MAC, %llu for another endpoint, %llu stale pongs, %llu pongs over the rate limit, %llu send errors",
        static_cast<unsigned long long>(c.pings_sent), static_cast<unsigned long long>(c.pongs_sent),
        static_cast<unsigned long long>(c.pongs_received), static_cast<unsigned long long>(c.malformed),
        static_cast<unsigned long long>(c.bad_mac), static_cast<unsigned long long>(c.not_for_us),
        static_cast<unsigned long long>(c.stale_pongs), static_cast<unsigned long long>(c.pongs_limited),
        static_cast<unsigned long long>(c.send_errors));
    ::close(wake_fd_);
    ::close(udp_fd_);
}

void liveness_monitor::publish(std::vector<watched_peer> waiting)
{
    std::lock_guard lock(mu_);
    published_ = std::move(waiting);
    fresh_ = true;
}

std::vector<liveness_monitor::verdict> liveness_monitor::take_verdicts()
{
    std::lock_guard lock(mu_);
    verdict_ready_.store(false, std::memory_order_relaxed);
    return std::exchange(verdicts_, {});
}

liveness_monitor::counters liveness_monitor::stats() const
{
    std::lock_guard lock(mu_);
    return counters_;
}

// Liveness thread.
void liveness_monitor::run()
{
    for (;;) {
        pollfd fds[2] = {{udp_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
        const int n = ::poll(fds, 2, tick_ms);
        if (n < 0 && errno != EINTR) {
            log_error("liveness thread: poll failed (%s); peers are no longer watched", std::strerror(errno));
            return;
        }
        if (n > 0 && (fds[1].revents & POLLIN))
            return;
        const auto now = clock::now();
        if (n > 0 && (fds[0].revents & POLLIN))
            receive(now);
        tick(now);
    }
}

// Liveness thread.
void liveness_monitor::receive(clock::time_point now)
{
    for (int i = 0; i < datagrams_per_wake; ++i) {
        std::uint8_t buf[wire::heartbeat_size + 1];
        sockaddr_in from {};
        socklen_t flen = sizeof from;
        const ssize_t r = ::recvfrom(udp_fd_, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &flen);
        if (r < 0)
            return; // EAGAIN: drained (other errors: ICMP reports, nothing to do)
        auto d = wire::decode_heartbeat(buf, static_cast<std::size_t>(r));
        if (std::holds_alternative<wire::decode_error>(d)) {
            ++local_.malformed;
            continue;
        }
        if (!wire::verify_heartbeat(buf, key_)) {
            ++local_.bad_mac;
            continue;
        }
        const auto& h = std::get<wire::heartbeat>(d);
        // `from` is not looked at for a pong: what authenticates it is the
        // MAC, the target nonce and the echoed challenge, and a relayed
        // peer's pong arrives from its relay's address.
        if (h.target != self_nonce_) {
            ++local_.not_for_us; // a restarted process on a reused port, or a stale card
            continue;
        }
        if (h.kind == wire::heartbeat_kind::ping) {
            if (now - pong_window_ >= std::chrono::seconds(1)) {
                pong_window_ = now;
                pongs_in_window_ = 0;
            }
            if (++pongs_in_window_ > pongs_per_second) {
                ++local_.pongs_limited;
                continue;
            }
            wire::heartbeat pong;
            pong.kind = wire::heartbeat_kind::pong;
            pong.sender = self_nonce_;
            pong.target = h.sender;
            pong.challenge = h.challenge;
            const auto bytes = wire::encode_heartbeat(pong, key_);
            if (::sendto(udp_fd_, bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr*>(&from), flen) < 0)
                ++local_.send_errors;
            else
                ++local_.pongs_sent;
            continue;
        }
        auto t = std::find_if(tracked_.begin(), tracked_.end(), [&](const tracked& x) {
            return x.who.nonce == h.sender &&
                std::find(x.challenges.begin(), x.challenges.end(), h.challenge) != x.challenges.end();
        });
        if (t == tracked_.end()) {
            ++local_.stale_pongs;
            continue;
        }
        ++local_.pongs_received;
        t->last_pong = now;
        t->watch.heard(now);
    }
}

// Liveness thread.
void liveness_monitor::send_ping(tracked& t, clock::time_point now)
{
    wire::heartbeat ping;
    ping.sender = self_nonce_;
    ping.target = t.who.nonce;
    if (getrandom(ping.challenge.data(), ping.challenge.size(), GRND_NONBLOCK) !=
        static_cast<ssize_t>(ping.challenge.size())) {
        // No fresh randomness right now: a challenge that never repeats is
        // still enough against replays of our own past pongs.
        static std::atomic<std::uint64_t> fallback {0};
        const std::uint64_t c[2] = {++fallback, static_cast<std::uint64_t>(now.time_since_epoch().count())};
        std::memcpy(ping.challenge.data(), c, sizeof c);
    }
    t.challenges[t.next_challenge] = ping.challenge;
    t.next_challenge = (t.next_challenge + 1) % challenges_kept;
    const auto bytes = wire::encode_heartbeat(ping, key_);
    sockaddr_in to {};
    to.sin_family = AF_INET;
    to.sin_addr.s_addr = htonl(t.who.ipv4);
    to.sin_port = htons(t.who.port);
    const std::uint8_t* out = bytes.data();
    std::size_t out_len = bytes.size();
    std::array<std::uint8_t, wire::relay_liveness_size> wrapped {};
    if (t.who.relay_port != 0) {
        // Through the relay of the peer's trunk, which forwards the ping to
        // the card's address; the pong comes back from the relay's address
        // (receive() looks at what a pong proves, not where it came from).
        wrapped = wire::encode(wire::relay_liveness {t.who.ipv4, t.who.port, t.who.cluster, bytes});
        out = wrapped.data();
        out_len = wrapped.size();
        to.sin_addr.s_addr = htonl(t.who.relay_ipv4);
        to.sin_port = htons(t.who.relay_port);
    }
    if (::sendto(udp_fd_, out, out_len, 0, reinterpret_cast<sockaddr*>(&to), sizeof to) < 0)
        ++local_.send_errors; // unreachable network and the like: the silence will tell
    else
        ++local_.pings_sent;
    t.watch.pinged(now);
}

// Liveness thread.
void liveness_monitor::tick(clock::time_point now)
{
    std::vector<watched_peer> waiting;
    bool fresh = false;
    {
        std::lock_guard lock(mu_);
        if (fresh_) {
            waiting = published_;
            fresh = true;
            fresh_ = false;
        }
        counters_ = local_;
    }
    if (fresh) {
        std::vector<bool> present(tracked_.size(), false);
        for (auto& w : waiting) {
            auto t = std::find_if(tracked_.begin(), tracked_.end(), [&](const tracked& x) { return x.who.key == w.key; });
            if (t == tracked_.end()) {
                tracked_.push_back(tracked {w, peer_watch(settings_.timing), {}, 0, {}, {}, false});
                present.push_back(true);
                t = tracked_.end() - 1;
            } else {
                present[static_cast<std::size_t>(t - tracked_.begin())] = true;
                if (w.rx_bytes != t->who.rx_bytes) {
                    t->last_data = now;
                    t->watch.heard(now);
                }
            }
            t->who = std::move(w);
        }
        // Waiting since the first publication that named it, not since the
        // latest one.
        for (std::size_t i = 0; i < tracked_.size(); ++i)
            tracked_[i].watch.set_waiting(present[i], now);
    }
    for (auto& t : tracked_) {
        switch (t.watch.decide(now)) {
        case peer_watch::action::none:
            break;
        case peer_watch::action::ping:
            send_ping(t, now);
            break;
        case peer_watch::action::dead: {
            if (t.reported)
                break;
            t.reported = true;
            std::string last;
            const auto latest = t.last_pong && (!t.last_data || *t.last_pong > *t.last_data) ? t.last_pong : t.last_data;
            if (!latest)
                last = "nothing heard from it";
            else
                last = "last heard from it " + fmt_seconds(now - *latest) + " ago (" +
                    (latest == t.last_pong ? "an answer to a ping" : "data") + ")";
            verdict v;
            v.key = t.who.key;
            v.why = "no answer to liveness pings for " + fmt_seconds(now - t.watch.silent_since()) +
                " while this process waits on it; " + last +
                ". The process may be stopped (SIGSTOP, a debugger) or the network between the two hosts down "
                "(FI_HASHI_PEER_TIMEOUT=" + std::to_string(settings_.timing.timeout.count() / 1000) + " s)";
            std::lock_guard lock(mu_);
            verdicts_.push_back(std::move(v));
            verdict_ready_.store(true, std::memory_order_relaxed);
            break;
        }
        }
    }
}

} // namespace hashi::fi
