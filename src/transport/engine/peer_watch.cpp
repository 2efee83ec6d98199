// SPDX-License-Identifier: BSD-3-Clause
#include "transport/engine/peer_watch.hpp"

#include <algorithm>

namespace hashi::fi {

void peer_watch::set_waiting(bool waiting, clock::time_point now) noexcept
{
    if (waiting && !waiting_)
        waiting_since_ = now;
    waiting_ = waiting;
}

void peer_watch::heard(clock::time_point now) noexcept
{
    if (!last_heard_ || now > *last_heard_)
        last_heard_ = now;
}

void peer_watch::pinged(clock::time_point now) noexcept { last_ping_ = now; }

peer_watch::clock::time_point peer_watch::silent_since() const noexcept
{
    return last_heard_ ? std::max(waiting_since_, *last_heard_) : waiting_since_;
}

peer_watch::action peer_watch::decide(clock::time_point now) const noexcept
{
    if (!waiting_)
        return action::none;
    if (t_.timeout.count() > 0 && now - silent_since() >= t_.timeout)
        return action::dead;
    const bool quiet = !last_heard_ || now - *last_heard_ >= t_.heartbeat;
    // Unanswered pings are repeated, a third of an interval apart, so that
    // a few lost datagrams do not add up to the timeout.
    const auto retry = std::max<clock::duration>(t_.heartbeat / 3, std::chrono::milliseconds(100));
    const bool due = !last_ping_ || now - *last_ping_ >= retry;
    return quiet && due ? action::ping : action::none;
}

} // namespace hashi::fi
