// SPDX-License-Identifier: BSD-3-Clause
// What the liveness thread knows about one peer, and the decision it makes
// from that on every tick: nothing, send a ping, or declare the peer dead.
//
// Pure bookkeeping over timestamps (no sockets, no clock of its own), so the
// rules are unit-tested directly. Only the liveness thread uses an instance.
//
// The rules:
//   - a peer is only watched while this endpoint waits on it (the progress
//     thread says so); a peer nobody waits on is never pinged or failed, so
//     an idle job is never killed;
//   - while waited on and nothing (data or pong) was heard for one heartbeat
//     interval, ping; repeat every third of the interval until answered;
//   - silent for the peer timeout while waited on, counted from the later of
//     "last heard" and "began waiting": dead.
#pragma once

#include <chrono>
#include <optional>

namespace hashi::fi {

struct liveness_timing {
    std::chrono::milliseconds heartbeat {3000};
    std::chrono::milliseconds timeout {15000};
};

class peer_watch {
public:
    using clock = std::chrono::steady_clock;
    enum class action { none, ping, dead };

    explicit peer_watch(liveness_timing t) noexcept : t_(t) {}

    // The progress thread's latest view: does this endpoint wait on the peer?
    void set_waiting(bool waiting, clock::time_point now) noexcept;
    void heard(clock::time_point now) noexcept; // a pong or data from the peer
    void pinged(clock::time_point now) noexcept;

    action decide(clock::time_point now) const noexcept;

    bool waiting() const noexcept { return waiting_; }
    // Since when silence is counted (meaningful while waiting).
    clock::time_point silent_since() const noexcept;
    std::optional<clock::time_point> last_heard() const noexcept { return last_heard_; }

private:
    liveness_timing t_;
    bool waiting_ = false;
    clock::time_point waiting_since_ {};
    std::optional<clock::time_point> last_heard_;
    std::optional<clock::time_point> last_ping_;
};

} // namespace hashi::fi
