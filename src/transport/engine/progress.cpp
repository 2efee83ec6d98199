// SPDX-License-Identifier: BSD-3-Clause
// The epoll set and timer list of an endpoint (progress.hpp).
#include "transport/engine/progress.hpp"

#include "transport/engine/log_limiter.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace hashi::fi {

registration& registration::operator=(registration&& o) noexcept
{
    if (this != &o) {
        reset();
        loop_ = o.loop_;
        fd_ = o.fd_;
        events_ = o.events_;
        handler_ = o.handler_;
        o.loop_ = nullptr;
    }
    return *this;
}

void registration::reset() noexcept
{
    if (loop_ != nullptr)
        loop_->remove(fd_);
    loop_ = nullptr;
}

void registration::want(std::uint32_t events) const
{
    if (loop_ == nullptr || events == events_)
        return;
    events_ = events;
    loop_->modify(fd_, handler_, events);
}

progress_loop::progress_loop() : epoll_fd_(::epoll_create1(EPOLL_CLOEXEC))
{
    if (epoll_fd_ < 0)
        throw std::runtime_error(std::string("epoll_create1: ") + std::strerror(errno));
}

progress_loop::~progress_loop()
{
    ::close(epoll_fd_);
}

registration progress_loop::watch(int fd, event_handler* h, std::uint32_t events)
{
    epoll_event ev {};
    ev.events = events;
    ev.data.ptr = h;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0)
        throw std::runtime_error(std::string("epoll_ctl(ADD): ") + std::strerror(errno));
    registration r(this, fd);
    r.events_ = events;
    r.handler_ = h;
    return r;
}

void progress_loop::modify(int fd, event_handler* h, std::uint32_t events) const
{
    epoll_event ev {};
    ev.events = events;
    ev.data.ptr = h;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev);
}

void progress_loop::remove(int fd) noexcept
{
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
}

progress_loop::timer_id progress_loop::at(std::uint64_t when_ns, std::function<void()> f)
{
    const timer_id id = next_timer_++;
    callbacks_.emplace(id, std::move(f));
    timers_.push({when_ns, id});
    return id;
}

void progress_loop::cancel(timer_id id)
{
    // The heap entry stays and is skipped when it comes due.
    callbacks_.erase(id);
}

bool progress_loop::run_due_timers(std::uint64_t now)
{
    bool ran = false;
    while (!timers_.empty() && timers_.top().when <= now) {
        const timer t = timers_.top();
        timers_.pop();
        auto it = callbacks_.find(t.id);
        if (it == callbacks_.end())
            continue;
        auto f = std::move(it->second);
        callbacks_.erase(it);
        f();
        ran = true;
    }
    return ran;
}

bool progress_loop::run_timers()
{
    return !timers_.empty() && run_due_timers(monotonic_ns());
}

bool progress_loop::poll()
{
    epoll_event events[64];
    const int n = ::epoll_wait(epoll_fd_, events, 64, 0);
    bool moved = n > 0;
    for (int i = 0; i < n; ++i)
        static_cast<event_handler*>(events[i].data.ptr)->on_events(events[i].events);
    if (!timers_.empty() && run_due_timers(monotonic_ns()))
        moved = true;
    return moved;
}

} // namespace hashi::fi
