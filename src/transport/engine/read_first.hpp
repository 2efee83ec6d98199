// SPDX-License-Identifier: BSD-3-Clause
// Reading the busiest path before asking epoll (issue 18, item 1).
//
// Contract: while one path keeps bringing input, a progress round reads that
// path's socket first and skips epoll_wait, so a message that is already
// there costs one system call (its recv) instead of two (epoll_wait, then
// recv); epoll is still asked at least every `epoll_every` rounds, in every
// round while frames wait to be written, and in every round once the hot
// path has brought nothing for `cool_after` rounds, so no other path, accept,
// write or timer waits more than `epoll_every` rounds for its turn.
//
// The policy only: the engine does the reading and the polling
// (engine::progress). It holds a pointer to the hot path and never
// dereferences it; the engine calls forget() before the path is freed.
// Progress thread only, like the rest of the engine.
#pragma once

namespace hashi::fi {

template <class Path> class read_first {
public:
    struct settings {
        // Rounds in a row that may skip epoll. A round that skips costs one
        // recv (about 0.3-0.5 us here), so 8 bound another path's wait to a
        // few microseconds.
        unsigned epoll_every = 8;
        // Rounds without input after which the path is no longer read first:
        // a few hundred recvs, longer than one round trip of a small message
        // on this kind of machine, so a ping-pong keeps its path hot.
        unsigned cool_after = 256;
    };

    read_first() = default;
    explicit read_first(settings s) : s_(s) {}

    // The path to read before epoll this round, or null.
    Path* hot() const noexcept { return hot_; }

    // After reading the hot path: whether it brought input. Says whether this
    // round may skip epoll_wait.
    bool skip_epoll(bool hot_brought_input, bool writes_pending) noexcept
    {
        if (hot_ == nullptr)
            return false;
        if (hot_brought_input) {
            idle_ = 0;
        } else if (++idle_ >= s_.cool_after) {
            hot_ = nullptr;
            ++cooled_;
            return false;
        }
        if (writes_pending || ++skipped_ >= s_.epoll_every) {
            skipped_ = 0;
            return false;
        }
        ++skips_;
        return true;
    }

    // epoll reported input on `c` and reading it brought some: it is read
    // first from now on (the newest such path wins).
    void input_on(Path* c) noexcept
    {
        if (c != hot_) {
            hot_ = c;
            skipped_ = 0;
        }
        idle_ = 0;
    }

    // `c` is closing: never read it first again.
    void forget(const Path* c) noexcept
    {
        if (hot_ == c) {
            hot_ = nullptr;
            skipped_ = idle_ = 0;
        }
    }

    // Rounds that skipped epoll_wait, and times a hot path went cold
    // (statistics).
    unsigned long long skips() const noexcept { return skips_; }
    unsigned long long cooled() const noexcept { return cooled_; }

private:
    settings s_ {};
    Path* hot_ = nullptr;
    unsigned skipped_ = 0; // rounds in a row that skipped epoll
    unsigned idle_ = 0; // rounds in a row the hot path brought nothing
    unsigned long long skips_ = 0;
    unsigned long long cooled_ = 0;
};

} // namespace hashi::fi
