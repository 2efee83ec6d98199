// SPDX-License-Identifier: BSD-3-Clause
#include "relay/server/log_limit.hpp"

namespace hashi::impi {

RateLimitedLog::RateLimitedLog(std::size_t burst, std::chrono::milliseconds window) : burst_(burst), window_(window)
{
}

bool RateLimitedLog::allow(const std::string& reason, Clock::time_point now)
{
    if (left_out_.empty() && now - window_start_ >= window_) {
        window_start_ = now;
        logged_ = 0;
    }
    if (logged_ < burst_) {
        ++logged_;
        return true;
    }
    ++left_out_[reason];
    return false;
}

std::optional<std::string> RateLimitedLog::summary(Clock::time_point now, bool flush)
{
    if (left_out_.empty() || (!flush && now - window_start_ < window_)) {
        return std::nullopt;
    }
    std::size_t total = 0;
    std::string why;
    for (const auto& [reason, n] : left_out_) {
        total += n;
        why += (why.empty() ? "" : "; ") + std::to_string(n) + " " + reason;
    }
    auto secs = std::chrono::duration_cast<std::chrono::seconds>(now - window_start_).count();
    left_out_.clear();
    window_start_ = now;
    logged_ = 0;
    return std::to_string(total) + " more connections from strangers were closed in the last " + std::to_string(secs) +
        " s without a line each (" + why + ")";
}

} // namespace hashi::impi
