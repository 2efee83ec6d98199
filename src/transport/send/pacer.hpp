// SPDX-License-Identifier: BSD-3-Clause
// The pacer hook of a path: consulted before every write, it says how many
// bytes may leave now. Contract: allowance(now) is the byte budget for a
// write at `now` (unlimited for no pacing), consumed() charges what was
// written, ready_at() is when a zero allowance becomes positive again (the
// path arms a timer for it). Progress thread only.
//
// Two pacers exist. `no_pacer` never holds anything back (paths inside a
// cluster); `token_bucket` releases bytes at a rate with a bounded burst,
// in user space: one of them paces all of a process's WAN paths at its
// share of the job's WAN budget (engine/wan_pacing), which also sets the
// sockets' kernel pacing rate (SO_MAX_PACING_RATE) at the same hook.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

namespace hashi::fi {

class pacer {
public:
    static constexpr std::size_t unlimited = std::numeric_limits<std::size_t>::max();
    virtual ~pacer() = default;
    virtual std::size_t allowance(std::uint64_t now_ns) = 0;
    virtual void consumed(std::size_t bytes, std::uint64_t now_ns) = 0;
    virtual std::uint64_t ready_at(std::uint64_t now_ns) const = 0;
};

class no_pacer final : public pacer {
public:
    std::size_t allowance(std::uint64_t) override { return unlimited; }
    void consumed(std::size_t, std::uint64_t) override {}
    std::uint64_t ready_at(std::uint64_t now_ns) const override { return now_ns; }
};

// Bytes accrue at `rate` bytes per second up to `burst`; a write may spend
// what has accrued. Over any interval T it releases at most burst + rate*T.
class token_bucket final : public pacer {
public:
    token_bucket(std::uint64_t rate_bytes_per_s, std::size_t burst_bytes, std::uint64_t now_ns);
    std::size_t allowance(std::uint64_t now_ns) override;
    void consumed(std::size_t bytes, std::uint64_t now_ns) override;
    std::uint64_t ready_at(std::uint64_t now_ns) const override;
    void set_rate(std::uint64_t rate_bytes_per_s, std::uint64_t now_ns);
    std::uint64_t rate() const noexcept { return rate_; }

private:
    void refill(std::uint64_t now_ns);
    std::uint64_t rate_;
    double burst_;
    double tokens_;
    std::uint64_t last_ns_;
};

} // namespace hashi::fi
