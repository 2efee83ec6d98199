// SPDX-License-Identifier: BSD-3-Clause
#include "relay/relay/trunk_queue.hpp"

#include <utility>

namespace hashi::relay {

void trunk_queue::push_control(byte_buffer f)
{
    bytes_ += f.size();
    control_.push_back(std::move(f));
}

void trunk_queue::push_stream(std::uint32_t id, byte_buffer f)
{
    bytes_ += f.size();
    if (f.size() <= small_frame && !has(id)) {
        express_ids_.insert(id);
        express_.push_back({id, std::move(f)});
        return;
    }
    // Behind the stream's express frame, if it has one: express frames
    // leave before every round-robin frame, so the order holds.
    auto [it, fresh] = streams_.try_emplace(id);
    it->second.push_back(std::move(f));
    if (fresh) {
        turn_.push_back(id);
    }
}

void trunk_queue::push_last(byte_buffer f)
{
    bytes_ += f.size();
    last_.push_back(std::move(f));
}

std::optional<trunk_queue::next> trunk_queue::pop()
{
    next n;
    if (!control_.empty()) {
        n.frame = std::move(control_.front());
        control_.pop_front();
    } else if (!express_.empty()) {
        const std::uint32_t id = express_.front().id;
        n.frame = std::move(express_.front().frame);
        express_.pop_front();
        express_ids_.erase(id);
        if (streams_.count(id) == 0) {
            n.emptied = id;
        }
    } else if (!turn_.empty()) {
        const std::uint32_t id = turn_.front();
        turn_.pop_front();
        auto it = streams_.find(id);
        n.frame = std::move(it->second.front());
        it->second.pop_front();
        if (it->second.empty()) {
            streams_.erase(it);
            n.emptied = id;
        } else {
            turn_.push_back(id); // its next frame after every other stream's
        }
    } else if (!last_.empty()) {
        n.frame = std::move(last_.front());
        last_.pop_front();
    } else {
        return std::nullopt;
    }
    bytes_ -= n.frame.size();
    return n;
}

} // namespace hashi::relay
