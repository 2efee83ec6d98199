// SPDX-License-Identifier: BSD-3-Clause
// The split of a gateway's WAN link over its sending trunks (trunk_pacing.hpp).
#include "relay/relay/trunk_pacing.hpp"

#include "relay/relay/trunk_tuning.hpp"
#include "transport/send/payload_of_wire.hpp"

namespace hashi::relay {

namespace {

fi::sending_sockets::key key_of(const void* t, int fd) { return {t, fd}; }

} // namespace

bool trunk_pacing::writing(const void* t, int fd, std::size_t bytes, std::uint64_t now_ns)
{
    if (wan_rate_ == 0) {
        return false;
    }
    const auto k = key_of(t, fd);
    // A small write keeps a sending trunk counted, and starts nothing.
    if (bytes < bulk_write && !sending_.counts(k)) {
        return false;
    }
    // The drain estimate wants the payload rate the trunks share.
    return sending_.sent(k, bytes, now_ns, trunk_pacing_rate(wan_rate_, 1));
}

bool trunk_pacing::expire(std::uint64_t now_ns, const std::function<std::size_t(const void* t, int fd)>& unsent)
{
    return sending_.expire(now_ns, trunk_pacing_rate(wan_rate_, 1),
        [&](const fi::sending_sockets::key& k) { return unsent ? unsent(k.owner, k.fd) : 0; });
}

bool trunk_pacing::forget(const void* t, int fd)
{
    return sending_.forget(key_of(t, fd));
}

std::uint64_t trunk_pacing::rate() const
{
    return trunk_pacing_rate(wan_rate_, sending_.count());
}

} // namespace hashi::relay
