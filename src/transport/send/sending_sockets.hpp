// SPDX-License-Identifier: BSD-3-Clause
// Which of a process's WAN sockets are sending now, so that the process's
// WAN share is split over them: each socket's kernel pacing rate is the
// share / the sockets sending. Contract: sent(key, bytes, now, rate) says a
// socket handed `bytes` to the kernel, and it counts as sending until those
// bytes should have left at its part of `rate` (looked at again within
// max_hold_ns), then for as long as expire()'s `unsent` says it still has
// bytes to send; count() is the number of sockets sending at the last
// call. Progress thread only.
//
// Why: a process of an alltoall writes to all its WAN peers at once, and
// with the whole share on each socket it put N shares on the wire for as
// long as its token bucket's burst lasted: four such processes of a
// cluster offered 400 Mbit/s to a 100 Mbit/s WAN, and its 128 KB queue
// dropped about as much as unpaced (bench/wan, 5 Dec: 3877 drops paced
// against 4021 unpaced for FT). Counting sockets as open instead of sending
// would give a socket used alone after an alltoall a quarter of the share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace hashi::fi {

class sending_sockets {
public:
    // A socket: `owner` (its peer, which outlives it) and descriptor; the
    // engine checks the pair still names an open path before using it.
    struct key {
        const void* owner = nullptr;
        int fd = -1;
        bool operator==(const key&) const = default;
    };

    // A socket counts as sending for at least this long after a write, so
    // that one writing small messages now and then is counted while it does.
    static constexpr std::uint64_t min_hold_ns = 2'000'000;
    // And at most this long before expire() asks what it still has to
    // send: the estimate assumes the socket drains at its part, which the
    // bucket (shared by all the process's WAN paths, first come first
    // served) and TCP's window need not keep.
    static constexpr std::uint64_t max_hold_ns = 50'000'000;

    // `bytes` went into the socket's kernel buffer at `now`; `rate` is the
    // process's share (bytes/s, > 0). True when the socket was not counted
    // yet (the others' rates are then stale). Expiring is expire()'s.
    bool sent(key k, std::size_t bytes, std::uint64_t now_ns, std::uint64_t rate);
    // Drops the sockets whose bytes should have left by `now`; true when
    // any did. `unsent` (optional) asks what such a socket still has to
    // send (in the kernel and queued for it): one whose pacing or window
    // kept it slower than its part, or that waits for the process's token
    // bucket with more to send, stays for that much, since the others must
    // not take its part while it still sends at it.
    bool expire(std::uint64_t now_ns, std::uint64_t rate = 0,
        const std::function<std::size_t(const key&)>& unsent = nullptr);
    // Forgets a socket at once (its path closed).
    bool forget(key k);
    std::size_t count() const noexcept { return sockets_.size(); }
    // Is `k` counted as sending?
    bool counts(key k) const noexcept
    {
        for (const auto& s : sockets_)
            if (s.k == k)
                return true;
        return false;
    }
    // The part of `rate` each sending socket gets (rate when none sends).
    std::uint64_t each(std::uint64_t rate) const noexcept
    {
        return sockets_.size() <= 1 ? rate : rate / sockets_.size();
    }
    // When the next socket stops counting (0 when none is sending).
    std::uint64_t next_expiry() const noexcept;
    template <class F> void for_each(F&& f) const
    {
        for (const auto& s : sockets_)
            f(s.k);
    }

private:
    struct sending {
        key k;
        std::uint64_t until_ns;
    };
    std::vector<sending> sockets_;
};

} // namespace hashi::fi
