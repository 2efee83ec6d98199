// SPDX-License-Identifier: BSD-3-Clause
#include "channel.hpp"

#include "common/environment.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <netdb.h>
#include <stdexcept>
#include <thread>

namespace hashi::impi {
namespace {

int ms_until(Clock::time_point deadline)
{
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return static_cast<int>(std::clamp<long long>(left, 0, 1000 * 1000));
}

// HASHI_IMPI_PEER_TIMEOUT: seconds without any answer from the peer's host
// after which a control connection is declared dead (default 20, 5..600).
unsigned int peer_timeout_seconds()
{
    constexpr unsigned int fallback = 20;
    std::string error;
    const auto v = env_whole("HASHI_IMPI_PEER_TIMEOUT", fallback, {.lo = 5, .hi = 600, .unit = "seconds"}, error);
    if (!v) {
        static bool told = false;
        if (!told) {
            std::fprintf(stderr, "hashi: warning: %s; using %u\n", error.c_str(), fallback);
            told = true;
        }
        return fallback;
    }
    return static_cast<unsigned int>(*v);
}

} // namespace

Channel::Channel(UniqueFd fd, Sender peer, std::string name) : fd_(std::move(fd)), peer_(peer), name_(std::move(name))
{
}

Channel::Status Channel::read_available(std::string& error)
{
    std::array<std::uint8_t, 65536> buf {};
    ssize_t n = ::recv(fd_.get(), buf.data(), buf.size(), MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) {
        return Status::ok;
    }
    if (n < 0) {
        error = errno == ETIMEDOUT ? "its host answered nothing for " + std::to_string(peer_timeout_seconds()) +
                " s (host down or network cut?)"
                                   : std::strerror(errno);
        return Status::error;
    }
    if (n == 0) {
        return Status::closed;
    }
    in_.insert(in_.end(), buf.begin(), buf.begin() + n);
    return Status::ok;
}

std::optional<Frame> Channel::next_frame(std::string& error)
{
    auto r = decode_frame(in_, peer_);
    switch (r.status) {
    case DecodeResult::Status::need_more:
        return std::nullopt;
    case DecodeResult::Status::error:
        error = r.error;
        return std::nullopt;
    case DecodeResult::Status::frame:
        in_.erase(in_.begin(), in_.begin() + static_cast<std::ptrdiff_t>(r.consumed));
        return std::move(r.frame);
    }
    return std::nullopt;
}

std::optional<std::uint32_t> Channel::incoming_command() const
{
    if (in_.size() < 4) {
        return std::nullopt;
    }
    return Reader(ByteView(in_.data(), 4)).u32();
}

Channel::Received Channel::receive(Clock::time_point deadline, int interrupt_fd)
{
    for (;;) {
        std::string error;
        if (auto f = next_frame(error)) {
            return {Received::Status::frame, std::move(*f), {}};
        }
        if (!error.empty()) {
            return {Received::Status::error, {}, error};
        }
        pollfd fds[2] = {{fd_.get(), POLLIN, 0}, {interrupt_fd, POLLIN, 0}};
        int n = ::poll(fds, interrupt_fd >= 0 ? 2 : 1, ms_until(deadline));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (interrupt_fd >= 0 && (fds[1].revents & POLLIN) != 0) {
            return {Received::Status::interrupted, {}, {}};
        }
        if (n == 0 && Clock::now() >= deadline) {
            return {Received::Status::timeout, {}, {}};
        }
        if (n > 0) {
            switch (read_available(error)) {
            case Status::ok:
                break;
            case Status::closed:
                return {Received::Status::closed, {}, {}};
            case Status::error:
                return {Received::Status::error, {}, error};
            }
        }
    }
}

bool Channel::send(std::uint32_t command, ByteView payload, std::string& error, std::chrono::milliseconds timeout)
{
    if (!fd_) {
        error = "connection already closed";
        return false;
    }
    auto bytes = encode_frame(command, payload);
    auto deadline = Clock::now() + timeout;
    std::size_t done = 0;
    while (done < bytes.size()) {
        ssize_t n = ::send(fd_.get(), bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            done += static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            pollfd pfd {fd_.get(), POLLOUT, 0};
            if (::poll(&pfd, 1, ms_until(deadline)) == 0 && Clock::now() >= deadline) {
                error = "the peer took nothing for " + std::to_string(timeout.count() / 1000) + " s";
                return false;
            }
            continue;
        }
        error = std::strerror(errno);
        return false;
    }
    return true;
}

void tune_socket(int fd)
{
    // The dead-peer bound of the control plane (ARCHITECTURE.md section 11:
    // a silent peer, host or link ends the job within 30 s): the kernel
    // declares the connection dead once the peer's host has acknowledged
    // nothing for `timeout` seconds (20 by default), whether data is
    // outstanding (TCP_USER_TIMEOUT caps the retransmissions) or the
    // connection is idle (keepalive probes after 5 s of silence, every 5 s;
    // with a user timeout set, the probe count no longer decides). Then the
    // server fails the job and tells the other clusters at once, and a
    // client kills its ranks. Measured between two network namespaces with
    // every packet dropped: 17 s for an idle connection, 20.5 s with a
    // barrier outstanding, on both sides.
    //
    // Why the kernel and not an application heartbeat: acknowledgements
    // and probe answers come from the peer's kernel, so a peer process that
    // waits for a CPU on a machine at load 40 is never taken for a dead
    // one, and an idle job costs nothing. A heartbeat would ride the same
    // TCP connection and be no better at telling a dead path from one that
    // loses everything for that long.
    //
    // What 30 s once ended (commit 77ae409, which moved to 90 s) was a
    // job whose control connection crossed the emulated WAN of a machine
    // at load 20-40, where the user-space delay line at normal priority
    // stalled for that long (commit d74cd2c): to TCP a silent link, as it
    // would be to any bound. Real hosts and links do not stop answering
    // under CPU load; an emulated WAN on a loaded machine needs real-time
    // delay lines (hashi-testbed --realtime) or a longer bound.
    // TCP_THIN_LINEAR_TIMEOUTS keeps the retransmission timeout from
    // doubling for the first 6 retries on a stream with fewer than 4
    // segments in flight (a control connection always is one), so after a
    // burst of losses or a stall it retransmits soon after the path is
    // back, not 8 or 16 s later. Measured with random loss on both
    // directions for 60 s and a barrier always outstanding: 30% survived,
    // with the slowest barrier at 6.7 s; at 50% one connection of two was
    // declared dead after 55 s. HASHI_IMPI_PEER_TIMEOUT changes the bound
    // (5..600 s; give the server and every client the same value).
    const unsigned int timeout = peer_timeout_seconds();
    int one = 1;
    int idle = 5;
    int interval = 5;
    int count = static_cast<int>(timeout / 5); // only where no user timeout exists
    unsigned int user_timeout_ms = timeout * 1000;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    ::setsockopt(fd, IPPROTO_TCP, TCP_THIN_LINEAR_TIMEOUTS, &one, sizeof one);
    ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
    ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
    ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof user_timeout_ms);
}

std::pair<std::string, std::string> split_host_port(const std::string& host_port)
{
    auto colon = host_port.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == host_port.size()) {
        throw std::invalid_argument("'" + host_port + "' is not host:port (impi-server prints it when it starts)");
    }
    std::string host = host_port.substr(0, colon);
    std::string port = host_port.substr(colon + 1);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
    }
    if (std::string error; !parse_whole("port", port, {.lo = 1, .hi = 65535}, error)) {
        throw std::invalid_argument(error + " (in '" + host_port + "')");
    }
    return {host, port};
}

namespace {

// One connection attempt bounded by `deadline`; errno-style result.
int connect_until(int fd, const addrinfo* ai, Clock::time_point deadline)
{
    int flags = ::fcntl(fd, F_GETFL);
    ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    int err = 0;
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        err = errno;
    }
    while (err == EINPROGRESS || err == EINTR) {
        pollfd pfd {fd, POLLOUT, 0};
        int n = ::poll(&pfd, 1, ms_until(deadline));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n == 0) {
            err = ETIMEDOUT;
            break;
        }
        socklen_t len = sizeof err;
        if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
            err = errno;
        }
    }
    ::fcntl(fd, F_SETFL, flags);
    return err;
}

} // namespace

UniqueFd connect_to(const std::string& host_port, Clock::time_point deadline, bool retry_refused)
{
    auto [host, port] = split_host_port(host_port);
    std::string last_error;
    for (;;) {
        addrinfo hints {};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        addrinfo* list = nullptr;
        int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &list);
        if (rc != 0) {
            throw std::runtime_error("cannot resolve '" + host + "': " + ::gai_strerror(rc));
        }
        bool refused = false;
        for (addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
            UniqueFd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
            int err = fd ? connect_until(fd.get(), ai, deadline) : errno;
            if (err == 0) {
                ::freeaddrinfo(list);
                tune_socket(fd.get());
                return fd;
            }
            refused = refused || err == ECONNREFUSED;
            last_error = err == ETIMEDOUT ? "no answer (connection timed out)" : std::strerror(err);
        }
        ::freeaddrinfo(list);
        if (refused && !retry_refused) {
            throw ConnectRefused("impi-server at " + host_port + " refused the connection");
        }
        // The server may be starting at the same moment in another cluster.
        if (Clock::now() + std::chrono::milliseconds(200) >= deadline) {
            throw std::runtime_error("cannot connect to impi-server at " + host_port + ": " + last_error +
                " (is impi-server running, and is this its address?)");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
}

} // namespace hashi::impi
