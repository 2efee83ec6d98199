// SPDX-License-Identifier: BSD-3-Clause
// Lanes, cursors and sequence numbering of a peer's sends (send_scheduler.hpp).
#include "transport/send/send_scheduler.hpp"

#include <algorithm>

namespace hashi::fi {

std::size_t slice(const iovec* iov, std::size_t count, std::size_t offset, std::size_t len,
    std::array<iovec, provider_iov_limit>& out)
{
    std::size_t n = 0;
    for (std::size_t i = 0; i < count && len > 0; ++i) {
        if (offset >= iov[i].iov_len) {
            offset -= iov[i].iov_len;
            continue;
        }
        const std::size_t m = std::min(iov[i].iov_len - offset, len);
        out[n++] = {static_cast<std::uint8_t*>(iov[i].iov_base) + offset, m};
        len -= m;
        offset = 0;
    }
    return n;
}

void send_scheduler::push(lane l, tx_frame&& f)
{
    switch (l) {
    case lane::control:
        control_.push_back(std::move(f));
        break;
    case lane::message:
        message_.emplace_back(std::move(f));
        break;
    case lane::data:
        data_.emplace_back(std::move(f));
        break;
    }
}

void send_scheduler::push(lane l, transfer&& t)
{
    largest_transfer_ = std::max(largest_transfer_, t.total);
    (l == lane::data ? data_ : message_).emplace_back(std::move(t));
}

bool send_scheduler::striped_front(const std::deque<entry>& q, const stripe_policy& stripes) noexcept
{
    if (q.empty() || stripes.min_total == 0)
        return false;
    const auto* t = std::get_if<transfer>(&q.front());
    return t != nullptr && stripes.striped(*t);
}

tx_frame send_scheduler::take(std::deque<entry>& q, const stripe_policy& stripes)
{
    if (auto* f = std::get_if<tx_frame>(&q.front())) {
        tx_frame out = std::move(*f);
        q.pop_front();
        return out;
    }
    transfer& t = std::get<transfer>(q.front());
    const bool striped = stripes.striped(t);
    const std::size_t chunk = striped ? stripes.chunk_for(t.total, chunk_size_) : chunk_size_;
    const std::size_t n = std::min(chunk, t.total - t.next);
    tx_frame f;
    f.h.type = t.type;
    f.h.a = t.a;
    f.h.b = t.base + t.next;
    f.h.c = t.c;
    f.h.length = n;
    f.iov_count = static_cast<std::uint8_t>(slice(t.iov.data(), t.iov_count, t.next, n, f.iov));
    t.next += n;
    if (striped && t.done != nullptr) {
        f.chunk_of = t.done;
        ++t.done->chunks_unwritten;
    }
    if (t.next >= t.total) {
        f.done = t.done;
        f.ends_entry = true;
        q.pop_front();
    } else {
        f.ends_entry = false;
    }
    return f;
}

std::size_t send_scheduler::commit(std::deque<tx_frame>& out, std::size_t max_frames, std::size_t max_bytes,
    std::uint32_t& seq, const stripe_policy& stripes)
{
    std::size_t bytes = 0;
    while (out.size() < max_frames && bytes < max_bytes && !empty()) {
        tx_frame f;
        if (stripes.only_striped) {
            // A stripe lane: the next chunk of a striped transfer, data lane
            // first; anything else waits for lane 0.
            if (striped_front(data_, stripes))
                f = take(data_, stripes);
            else if (striped_front(message_, stripes))
                f = take(message_, stripes);
            else
                break;
        } else if (!control_.empty()) {
            f = std::move(control_.front());
            control_.pop_front();
        } else {
            // Message and data lanes alternate when both have something.
            const bool use_data = data_.empty() ? false : (message_.empty() || data_turn_);
            f = take(use_data ? data_ : message_, stripes);
            data_turn_ = !use_data;
        }
        f.h.seq = seq++;
        f.hdr = wire::encode_header(f.h);
        bytes += f.total();
        out.push_back(std::move(f));
    }
    return bytes;
}

} // namespace hashi::fi
