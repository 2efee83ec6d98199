// SPDX-License-Identifier: BSD-3-Clause
// impi-relay's one epoll set. Every connection object registers its socket
// with a handler; wait() dispatches the ready ones. Objects are destroyed
// only between rounds (the daemon reaps closed ones after wait() returns),
// so a handler may close any object, itself included, while it runs.
// One thread: the relay has no other.
#pragma once

#include "common/unique_fd.hpp"

#include <cstdint>

namespace hashi::relay {

class event_handler {
public:
    virtual ~event_handler() = default;
    virtual void on_events(std::uint32_t events) = 0;
};

class event_loop {
public:
    event_loop(); // throws std::runtime_error when epoll is unavailable
    void add(int fd, std::uint32_t events, event_handler* h);
    void modify(int fd, std::uint32_t events, event_handler* h);
    void remove(int fd) noexcept;
    // Waits at most timeout_ms and runs the handlers of what is ready.
    void wait(int timeout_ms);
    // How many waits returned with something ready: each one is a wakeup
    // the relay paid for (the CPU report divides by it).
    std::uint64_t wakeups() const noexcept { return wakeups_; }

private:
    std::uint64_t wakeups_ = 0;
    UniqueFd epoll_;
};

} // namespace hashi::relay
