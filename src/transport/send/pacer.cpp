// SPDX-License-Identifier: BSD-3-Clause
// The token bucket pacer (pacer.hpp).
#include "transport/send/pacer.hpp"

#include <algorithm>
#include <cmath>

namespace hashi::fi {

token_bucket::token_bucket(std::uint64_t rate_bytes_per_s, std::size_t burst_bytes, std::uint64_t now_ns)
    : rate_(std::max<std::uint64_t>(rate_bytes_per_s, 1)), burst_(static_cast<double>(std::max<std::size_t>(burst_bytes, 1))),
      tokens_(burst_), last_ns_(now_ns)
{
}

void token_bucket::refill(std::uint64_t now_ns)
{
    if (now_ns <= last_ns_)
        return;
    tokens_ = std::min(burst_, tokens_ + static_cast<double>(now_ns - last_ns_) * 1e-9 * static_cast<double>(rate_));
    last_ns_ = now_ns;
}

std::size_t token_bucket::allowance(std::uint64_t now_ns)
{
    refill(now_ns);
    return tokens_ < 1.0 ? 0 : static_cast<std::size_t>(tokens_);
}

void token_bucket::consumed(std::size_t bytes, std::uint64_t now_ns)
{
    refill(now_ns);
    // A write may take a little more than it was allowed (a frame header);
    // the debt is paid before the next write.
    tokens_ -= static_cast<double>(bytes);
}

std::uint64_t token_bucket::ready_at(std::uint64_t now_ns) const
{
    const double tokens = std::min(burst_,
        tokens_ + (now_ns > last_ns_ ? static_cast<double>(now_ns - last_ns_) * 1e-9 * static_cast<double>(rate_) : 0.0));
    if (tokens >= 1.0)
        return now_ns;
    const double wait_s = (1.0 - tokens) / static_cast<double>(rate_);
    return now_ns + static_cast<std::uint64_t>(std::ceil(wait_s * 1e9));
}

void token_bucket::set_rate(std::uint64_t rate_bytes_per_s, std::uint64_t now_ns)
{
    refill(now_ns);
    rate_ = std::max<std::uint64_t>(rate_bytes_per_s, 1);
}

} // namespace hashi::fi
