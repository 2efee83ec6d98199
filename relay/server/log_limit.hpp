// SPDX-License-Identifier: BSD-3-Clause
// Rate-limited logging of what strangers do (connections turned away,
// evicted, timed out). Each such event deserves a line when it is rare,
// but a flood of thousands of connections a second must not turn into
// megabytes of log: after `burst` lines in a window, further events are
// only counted by reason, and one summary line per window says how many
// were left out and why. Nothing is lost silently, and the log grows by at
// most burst + 1 lines per window whatever the flood.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>

namespace hashi::impi {

class RateLimitedLog {
public:
    using Clock = std::chrono::steady_clock;

    RateLimitedLog(std::size_t burst, std::chrono::milliseconds window);

    // An event of kind `reason` at `now`: true when it may be logged in
    // full; otherwise it is counted for the summary.
    bool allow(const std::string& reason, Clock::time_point now);
    // Once a window with left-out events is over (or at once with
    // `flush`, at exit): the summary line, and a new window. Call it
    // regularly, e.g. from the poll loop.
    [[nodiscard]] std::optional<std::string> summary(Clock::time_point now, bool flush = false);

private:
    std::size_t burst_;
    std::chrono::milliseconds window_;
    Clock::time_point window_start_ {};
    std::size_t logged_ = 0;
    std::map<std::string, std::size_t> left_out_;
};

} // namespace hashi::impi
