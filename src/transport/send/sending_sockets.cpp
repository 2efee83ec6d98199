// SPDX-License-Identifier: BSD-3-Clause
// The sending WAN sockets of a process (sending_sockets.hpp).
#include "transport/send/sending_sockets.hpp"

#include <algorithm>

namespace hashi::fi {

namespace {

// How long `bytes` take at a part of `rate` shared by `parts` sockets
// (capped at an hour, so no product overflows).
std::uint64_t drain_ns(std::size_t bytes, std::size_t parts, std::uint64_t rate)
{
    const long double ns = static_cast<long double>(bytes) * 1e9L * static_cast<long double>(std::max<std::size_t>(parts, 1)) /
        static_cast<long double>(std::max<std::uint64_t>(rate, 1));
    return static_cast<std::uint64_t>(std::min<long double>(ns, 3.6e12L));
}

} // namespace

bool sending_sockets::sent(key k, std::size_t bytes, std::uint64_t now_ns, std::uint64_t rate)
{
    auto it = std::find_if(sockets_.begin(), sockets_.end(), [&](const sending& s) { return s.k == k; });
    const bool added = it == sockets_.end();
    if (added) {
        sockets_.push_back({k, now_ns});
        it = sockets_.end() - 1;
    }
    // The bytes leave at this socket's part of the rate, after what it
    // still had to send.
    const std::uint64_t drained = std::max(it->until_ns, now_ns) + drain_ns(bytes, sockets_.size(), rate);
    it->until_ns = std::clamp(drained, now_ns + min_hold_ns, now_ns + max_hold_ns);
    return added;
}

bool sending_sockets::expire(std::uint64_t now_ns, std::uint64_t rate,
    const std::function<std::size_t(const key&)>& unsent)
{
    const std::size_t parts = sockets_.size();
    bool dropped = false;
    for (auto it = sockets_.begin(); it != sockets_.end();) {
        if (it->until_ns > now_ns) {
            ++it;
            continue;
        }
        if (unsent && rate != 0)
            if (const std::size_t left = unsent(it->k); left != 0) {
                it->until_ns = now_ns + std::clamp(drain_ns(left, parts, rate), min_hold_ns, max_hold_ns);
                ++it;
                continue;
            }
        it = sockets_.erase(it);
        dropped = true;
    }
    return dropped;
}

bool sending_sockets::forget(key k)
{
    return std::erase_if(sockets_, [&](const sending& s) { return s.k == k; }) != 0;
}

std::uint64_t sending_sockets::next_expiry() const noexcept
{
    std::uint64_t next = 0;
    for (const auto& s : sockets_)
        if (next == 0 || s.until_ns < next)
            next = s.until_ns;
    return next;
}

} // namespace hashi::fi
