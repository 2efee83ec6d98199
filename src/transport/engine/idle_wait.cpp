// SPDX-License-Identifier: BSD-3-Clause
// The idle policy's decisions (idle_wait.hpp has the contract and the why).
#include "transport/engine/idle_wait.hpp"

namespace hashi::fi {

idle_wait::action idle_wait::after_poll(std::uint64_t now_ns, bool moved) noexcept
{
    const bool looping = last_poll_ != 0 && now_ns - last_poll_ <= gap_ns;
    last_poll_ = now_ns;
    if (moved) {
        idle_since_ = 0;
        return action::spin;
    }
    if (!looping || idle_since_ == 0) {
        idle_since_ = now_ns;
        return action::spin;
    }
    if (now_ns - idle_since_ < spin_ns())
        return action::spin;
    if (contended_ && ++since_probe_ < probe_every) {
        ++naps_;
        return action::nap;
    }
    since_probe_ = 0;
    ++yields_;
    return action::yield;
}

std::uint64_t idle_wait::spin_ns() const noexcept
{
    if (fixed_)
        return fixed_spin_ns_;
    return crowded_ ? crowded_spin_ns : own_cpu_spin_ns;
}

void idle_wait::gave_away(action done, std::uint64_t took_ns) noexcept
{
    if (done == action::yield)
        contended_ = took_ns > slice_ns;
    // The time given away is not a gap between two polls of the loop.
    last_poll_ += took_ns;
}

} // namespace hashi::fi
