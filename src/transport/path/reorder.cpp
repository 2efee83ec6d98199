// SPDX-License-Identifier: BSD-3-Clause
// The reorder stage (reorder.hpp).
#include "transport/path/reorder.hpp"

namespace hashi::fi {

reorder_stage::verdict reorder_stage::offer(std::uint32_t seq, std::size_t bytes) const noexcept
{
    const std::uint32_t ahead = seq - expected_; // modulo 2^32
    if (ahead == 0)
        return verdict::deliver;
    if (ahead > max_ahead)
        return ahead > (~std::uint32_t {0} - max_ahead) ? verdict::behind : verdict::too_far;
    if (held_.count(seq) != 0)
        return verdict::behind; // a second frame with the same number
    // A frame bigger than the whole stage is still taken when nothing else
    // is held, or a large chunk could never get through.
    if (held_bytes_ + bytes > cap_ && held_bytes_ > 0)
        return verdict::full;
    return verdict::hold;
}

void reorder_stage::hold(const wire::frame_header& h, const std::uint8_t* payload, std::size_t len)
{
    held_frame f;
    f.h = h;
    f.payload.assign(payload, payload + len);
    held_bytes_ += wire::header_size + len;
    held_.emplace(h.seq, std::move(f));
}

std::optional<reorder_stage::held_frame> reorder_stage::take_next()
{
    auto it = held_.find(expected_);
    if (it == held_.end())
        return std::nullopt;
    held_frame f = std::move(it->second);
    held_.erase(it);
    held_bytes_ -= wire::header_size + f.payload.size();
    return f;
}

} // namespace hashi::fi
