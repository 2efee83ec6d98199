// SPDX-License-Identifier: BSD-3-Clause
#include "channel.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
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
        error = std::strerror(errno);
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
    // A host that vanishes silently is declared dead after about 90 s of
    // unanswered probes or unacknowledged data. 30 s was seen to end a job
    // whose control connection crossed an emulated WAN on a machine at a
    // load of 20-40 ("Connection timed out before FINI"); a control plane
    // that is idle for most of a job can afford to wait longer.
    int one = 1;
    int idle = 20;
    int interval = 10;
    int count = 7;
    unsigned int user_timeout_ms = 90000;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
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
    if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5 || std::stoi(port) > 65535 ||
        std::stoi(port) == 0) {
        throw std::invalid_argument("'" + port + "' in '" + host_port + "' is not a port number");
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
