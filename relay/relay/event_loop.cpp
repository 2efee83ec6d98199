// SPDX-License-Identifier: BSD-3-Clause
#include "relay/relay/event_loop.hpp"

#include <sys/epoll.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace hashi::relay {

event_loop::event_loop() : epoll_(::epoll_create1(EPOLL_CLOEXEC))
{
    if (!epoll_.valid()) {
        throw std::runtime_error(std::string("epoll_create1: ") + std::strerror(errno));
    }
}

void event_loop::add(int fd, std::uint32_t events, event_handler* h)
{
    epoll_event ev {};
    ev.events = events;
    ev.data.ptr = h;
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) {
        throw std::runtime_error(std::string("epoll_ctl(ADD): ") + std::strerror(errno));
    }
}

void event_loop::modify(int fd, std::uint32_t events, event_handler* h)
{
    epoll_event ev {};
    ev.events = events;
    ev.data.ptr = h;
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, fd, &ev);
}

void event_loop::remove(int fd) noexcept
{
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
}

void event_loop::wait(int timeout_ms)
{
    epoll_event events[64];
    const int n = ::epoll_wait(epoll_.get(), events, 64, timeout_ms);
    if (n > 0) {
        ++wakeups_;
    }
    for (int i = 0; i < n; ++i) {
        static_cast<event_handler*>(events[i].data.ptr)->on_events(events[i].events);
    }
}

} // namespace hashi::relay
