// SPDX-License-Identifier: BSD-3-Clause
// The progress object of an endpoint: one epoll set and one timer list.
//
// Contract: poll() waits for nothing (epoll_wait with a zero timeout, manual
// progress), runs the handler of every descriptor that is ready, then every
// timer that is due, and says whether anything ran. Every descriptor the
// endpoint watches is registered here and nowhere else, through a
// `registration` that removes it when it goes (RAII), so a closed path can
// never be reported again; events already fetched in the same round still
// reach the handler, so a handler must outlive the round in which its
// registration goes (paths are freed after poll(), engine.cpp). Timers are
// one-shot; what repeats arms itself again. Progress thread only: nothing
// is locked.
#pragma once

#include <sys/epoll.h>

#include <cstdint>
#include <functional>
#include <queue>
#include <unordered_map>
#include <vector>

namespace hashi::fi {

class progress_loop;

// Something that owns a descriptor and wants its events.
class event_handler {
public:
    virtual void on_events(std::uint32_t events) = 0;

protected:
    ~event_handler() = default;
};

// One descriptor in the epoll set; removed from it when destroyed or reset.
class registration {
public:
    registration() = default;
    registration(progress_loop* loop, int fd) : loop_(loop), fd_(fd) {}
    registration(registration&& o) noexcept : loop_(o.loop_), fd_(o.fd_) { o.loop_ = nullptr; }
    registration& operator=(registration&& o) noexcept;
    registration(const registration&) = delete;
    registration& operator=(const registration&) = delete;
    ~registration() { reset(); }
    void reset() noexcept;
    // Changes the events asked for (EPOLLIN, EPOLLOUT, or none).
    void want(std::uint32_t events) const;
    explicit operator bool() const noexcept { return loop_ != nullptr; }

private:
    progress_loop* loop_ = nullptr;
    int fd_ = -1;
    mutable std::uint32_t events_ = ~0u;
    mutable event_handler* handler_ = nullptr;
    friend class progress_loop;
};

class progress_loop {
public:
    using timer_id = std::uint64_t;

    progress_loop(); // throws std::runtime_error when epoll cannot be had
    ~progress_loop();
    progress_loop(const progress_loop&) = delete;
    progress_loop& operator=(const progress_loop&) = delete;

    // Adds `fd` with `events`; `h` is told when it is ready.
    [[nodiscard]] registration watch(int fd, event_handler* h, std::uint32_t events);
    // Runs `f` once monotonic_ns() >= at (from poll()). Returns an id for cancel().
    timer_id at(std::uint64_t when_ns, std::function<void()> f);
    void cancel(timer_id id);
    bool timers_pending() const noexcept { return !timers_.empty(); }

    // One round: ready descriptors, then due timers. True if anything ran.
    bool poll();
    // Due timers only, for a round that skips epoll (engine/read_first.hpp).
    bool run_timers();

private:
    friend class registration;
    void modify(int fd, event_handler* h, std::uint32_t events) const;
    void remove(int fd) noexcept;
    bool run_due_timers(std::uint64_t now);

    struct timer {
        std::uint64_t when;
        timer_id id;
        bool operator>(const timer& o) const noexcept { return when != o.when ? when > o.when : id > o.id; }
    };
    int epoll_fd_ = -1;
    std::priority_queue<timer, std::vector<timer>, std::greater<timer>> timers_;
    std::unordered_map<timer_id, std::function<void()>> callbacks_;
    timer_id next_timer_ = 1;
};

} // namespace hashi::fi
