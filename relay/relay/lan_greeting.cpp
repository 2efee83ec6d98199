// SPDX-License-Identifier: BSD-3-Clause
// A connection on the relay's LAN port, until it says what it is by its
// first four bytes: "AUTH" is an mpiexec's IMPI control connection, carried
// to impi-server byte for byte (the server authenticates it: the relay
// adds nothing and reads nothing of it); "HRRQ" is a rank's route request,
// handed to a route_stream (held until the relay knows its job). Anything
// else is closed without a word.
//
// Bounds: 10 s to say what it is and be served; at most max_greetings at once (the
// daemon closes the oldest); a control connection holds at most 1 MiB in
// each direction, reading stops while the other side is slow.
#include "relay/relay/relay.hpp"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace hashi::relay {

namespace {

constexpr auto greeting_time = std::chrono::seconds(10);
constexpr std::size_t control_buffer = 1 << 20;

} // namespace

lan_greeting::lan_greeting(daemon& d, UniqueFd fd, std::string peer)
    : d_(d), fd_(std::move(fd)), peer_(std::move(peer)), deadline_(clock::now() + greeting_time)
{
    d_.loop().add(fd_.get(), EPOLLIN, this);
}

lan_greeting::~lan_greeting()
{
    if (fd_) {
        d_.loop().remove(fd_.get());
    }
    if (server_) {
        d_.loop().remove(server_.get());
    }
}

void lan_greeting::close_both(const std::string& why)
{
    if (!why.empty()) {
        d_.debug("closed the connection from " + peer_ + ": " + why);
    }
    if (fd_) {
        d_.loop().remove(fd_.get());
        fd_.reset();
    }
    if (server_) {
        d_.loop().remove(server_.get());
        server_.reset();
    }
}

void lan_greeting::tick(clock::time_point now)
{
    if (st_ == state::awaiting_job && fd_ && d_.key()) {
        st_ = state::sniff;
        d_.loop().modify(fd_.get(), EPOLLIN, this);
        on_events(EPOLLIN);
        return;
    }
    if (st_ == state::awaiting_job && fd_ && now > deadline_) {
        close_both("a route request, and no job to serve within " + std::to_string(greeting_time.count()) + " s");
        return;
    }
    if (st_ == state::sniff && fd_ && now > deadline_) {
        close_both("it said nothing within " + std::to_string(greeting_time.count()) + " s");
    }
}

void lan_greeting::on_events(std::uint32_t events)
{
    if (!fd_) {
        return;
    }
    if (st_ == state::awaiting_job) {
        // Registered for nothing: only an error or a hang-up wakes it.
        return close_both("");
    }
    if (st_ == state::control) {
        if ((events & EPOLLOUT) != 0 && !down_.empty()) {
            pump(-1, fd_.get(), down_);
        }
        if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0 && fd_) {
            pump(fd_.get(), server_.get(), up_);
        }
        update_events();
        return;
    }
    std::uint8_t head[wire::route_request_size];
    const ssize_t n = ::recv(fd_.get(), head, sizeof head, MSG_PEEK);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
        return close_both("");
    }
    if (n < 4) {
        return;
    }
    if (std::memcmp(head, "AUTH", 4) == 0) {
        // An mpiexec -client: connect to the server on its behalf.
        if (d_.key()) {
            return close_both("a control connection after the startup");
        }
        UniqueFd s;
        try {
            s = impi::connect_to(d_.server(), clock::now() + std::chrono::seconds(10), false);
        } catch (const std::exception& e) {
            return close_both(std::string("cannot reach impi-server for it: ") + e.what());
        }
        server_ = std::move(s);
        impi::tune_socket(server_.get());
        // connect_to hands over a blocking socket; the loop needs it not to.
        ::fcntl(server_.get(), F_SETFL, ::fcntl(server_.get(), F_GETFL) | O_NONBLOCK);
        st_ = state::control;
        d_.log("carrying the control connection of " + peer_ + " to impi-server at " + d_.server());
        d_.loop().add(server_.get(), EPOLLIN, &server_handler_);
        on_events(EPOLLIN);
        return;
    }
    if (std::memcmp(head, "HRRQ", 4) == 0) {
        if (static_cast<std::size_t>(n) < wire::route_request_size) {
            return; // the rest is on its way
        }
        if (!d_.key()) {
            st_ = state::awaiting_job; // tick() takes it up again
            d_.loop().modify(fd_.get(), 0, this);
            return;
        }
        ::recv(fd_.get(), head, sizeof head, 0);
        auto r = wire::decode_route_request(head, sizeof head);
        auto* req = std::get_if<wire::route_request>(&r);
        if (req == nullptr) {
            return close_both(std::get<wire::decode_error>(r).reason);
        }
        d_.loop().remove(fd_.get());
        auto s = std::make_unique<route_stream>(d_, std::move(fd_), true);
        s->start_ingress(*req);
        d_.route_stream_created(std::move(s));
        return;
    }
    close_both("not a Hashi connection");
}

void lan_greeting::on_server_events(std::uint32_t events)
{
    if (!server_) {
        return;
    }
    if ((events & EPOLLOUT) != 0 && !up_.empty()) {
        pump(-1, server_.get(), up_);
    }
    if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0 && server_) {
        pump(server_.get(), fd_.get(), down_);
    }
    update_events();
}

// Reads what `from` has (while `buf` has room) and writes what `buf` holds
// to `to`; from = -1 only writes. The end of either side ends both.
void lan_greeting::pump(int from, int to, std::vector<std::uint8_t>& buf)
{
    if (from >= 0) {
        while (buf.size() < control_buffer) {
            std::uint8_t chunk[16384];
            const ssize_t n = ::recv(from, chunk, sizeof chunk, 0);
            if (n > 0) {
                buf.insert(buf.end(), chunk, chunk + n);
                continue;
            }
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                break;
            }
            // Whatever is still buffered for the other side goes first.
            if (!buf.empty()) {
                ::send(to, buf.data(), buf.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
            }
            return close_both("");
        }
    }
    while (!buf.empty()) {
        const ssize_t n = ::send(to, buf.data(), buf.size(), MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                return;
            }
            return close_both(std::string("the control connection failed: ") + std::strerror(errno));
        }
        buf.erase(buf.begin(), buf.begin() + n);
    }
}

void lan_greeting::update_events()
{
    if (!fd_ || !server_) {
        return;
    }
    d_.loop().modify(fd_.get(), (up_.size() < control_buffer ? EPOLLIN : 0u) | (down_.empty() ? 0u : EPOLLOUT), this);
    d_.loop().modify(server_.get(), (down_.size() < control_buffer ? EPOLLIN : 0u) | (up_.empty() ? 0u : EPOLLOUT),
        &server_handler_);
}

} // namespace hashi::relay
