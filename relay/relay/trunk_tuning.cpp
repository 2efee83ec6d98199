// SPDX-License-Identifier: BSD-3-Clause
#include "relay/relay/trunk_tuning.hpp"

#include "relay/relay/relay.hpp"
#include "transport/send/payload_of_wire.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

namespace hashi::relay {

namespace {

// The unsent bytes a trunk's kernel buffer may hold, as time at the
// trunk's rate: what a frame queued now waits behind in the kernel, and
// how long the relay may take to wake and refill it without the
// connection running dry.
constexpr double unsent_seconds = 0.010;
constexpr int min_unsent = 16 << 10, max_unsent = 4 << 20;
constexpr int unsent_before_a_rate = 256 << 10;

} // namespace

std::string tune_trunk_socket(int fd, const relay_config& cfg)
{
    std::string refused;
    auto note = [&refused](const char* what) {
        refused += (refused.empty() ? "" : "; ") + std::string(what) + ": " + std::strerror(errno);
    };
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    // Unacknowledged data for longer than the trunk timeout kills the
    // connection in the kernel too, so a dead WAN link is seen on both
    // sides even while a sender's queue is full.
    unsigned ms = static_cast<unsigned>(cfg.trunk_timeout.count() * 1000);
    if (::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof ms) != 0)
        note("TCP_USER_TIMEOUT");
    if (cfg.socket_buffer > 0) {
        if (::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &cfg.socket_buffer, sizeof cfg.socket_buffer) != 0)
            note("SO_SNDBUF");
        if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &cfg.socket_buffer, sizeof cfg.socket_buffer) != 0)
            note("SO_RCVBUF");
    }
    if (!cfg.tcp_cc.empty() &&
        ::setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cfg.tcp_cc.data(), static_cast<socklen_t>(cfg.tcp_cc.size())) != 0)
        note("TCP_CONGESTION");
    return refused;
}

std::uint64_t trunk_pacing_rate(std::uint64_t wan_rate, std::size_t trunks)
{
    if (wan_rate == 0)
        return 0;
    const double each = static_cast<double>(wan_rate) * fi::payload_of_wire / static_cast<double>(std::max<std::size_t>(trunks, 1));
    return std::max<std::uint64_t>(static_cast<std::uint64_t>(each), 1);
}

bool pace_trunk_socket(int fd, std::uint64_t rate)
{
    // ~0 lifts a limit set before (the kernel's "unlimited").
    const std::uint64_t v = rate != 0 ? rate : std::numeric_limits<std::uint64_t>::max();
    return ::setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &v, sizeof v) == 0;
}

int trunk_notsent_lowat(std::uint64_t rate)
{
    if (rate == 0)
        return unsent_before_a_rate;
    const double bytes = static_cast<double>(rate) * unsent_seconds;
    return static_cast<int>(std::clamp(bytes, static_cast<double>(min_unsent), static_cast<double>(max_unsent)));
}

bool set_trunk_notsent_lowat(int fd, int bytes)
{
    return ::setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &bytes, sizeof bytes) == 0;
}

} // namespace hashi::relay
