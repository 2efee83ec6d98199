// SPDX-License-Identifier: BSD-3-Clause
// The send scheduler of one peer: what leaves next, in which order.
//
// Three lanes, so that a clear-to-send or an acknowledgement never waits
// behind megabytes:
//   control  answers that unblock the peer (CTS, RMA write acks, RMA read
//            errors): always first;
//   message  everything that starts an operation at the peer, in the order
//            the application issued it (eager messages, rendezvous
//            requests, RMA writes, RMA read requests), which keeps libfabric's
//            send-after-send and RMA ordering (info.hpp's msg_order);
//   data     payload the peer asked for (rendezvous data after its CTS, RMA
//            read responses).
// The message and data lanes take turns frame by frame, so neither starves
// the other. A large transfer is one entry, a cursor that cuts the next
// chunk only when it is committed, so a CTS for 4 GiB costs one entry, not
// 4,096 queued chunks.
//
// Contract: commit() moves frames, in lane order, to a path's write queue
// until that queue holds `max_frames` frames or `max_bytes` more bytes,
// numbering them from the peer's sequence as it goes (numbers follow the
// order on the wire, whatever lane a frame came from).
//
// Striping (a peer reached over several paths, router.hpp): transfers of at
// least `stripe_policy::min_total` bytes are cut into chunks of at most
// `stripe_policy::chunk`, about one per lane, and a stripe lane's commit (`only_striped`) takes
// nothing but such chunks, so whichever path has room carries the next one
// and small frames stay on lane 0. Progress thread only.
#pragma once

#include "transport/send/tx_frame.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <variant>
#include <vector>

namespace hashi::fi {

// A large payload sent as chunk frames of the same type, cut on demand.
struct transfer {
    wire::frame_type type {}; // data, rma_write or rma_read_resp
    std::uint64_t a = 0; // the chunk frames' `a` (receiver's op, RMA key, initiator's op)
    std::uint64_t base = 0; // chunk frames carry b = base + offset
    std::uint64_t c = 0; // the chunk frames' `c`
    std::array<iovec, provider_iov_limit> iov {}; // where the payload lies
    std::size_t iov_count = 0;
    std::size_t total = 0;
    std::size_t next = 0; // offset of the next chunk
    op* done = nullptr; // completed when the last chunk is written
};

struct stripe_policy {
    std::size_t min_total = 0; // transfers at least this large are striped; 0: none
    std::size_t chunk = 0; // the largest of their chunks (at most the scheduler's chunk size)
    bool only_striped = false; // a stripe lane: commit chunks of striped transfers only
    // The peer's open lanes: a striped transfer is cut into about one chunk
    // per lane (but none below min_chunk), so that a transfer just above
    // min_total reaches every trunk and not only the first two. Seen with
    // 128 KiB chunks only: 256 KiB messages from 4 ranks to 4 over 8
    // trunks used 2 trunks per pair, unevenly (bench/relay/run-trunks).
    std::size_t lanes = 1;
    std::size_t min_chunk = 32u << 10;

    // The size of the chunks of a striped transfer of `total` bytes, at
    // most `limit` (the scheduler's chunk size).
    std::size_t chunk_for(std::size_t total, std::size_t limit) const noexcept
    {
        std::size_t c = chunk != 0 ? std::min(limit, chunk) : limit;
        if (lanes > 1)
            c = std::min(c, std::max(min_chunk, (total + lanes - 1) / lanes));
        return c;
    }

    // RMA writes are not striped: the target acknowledges each chunk, and
    // the initiator counted the acknowledgements when the write was posted.
    bool striped(const transfer& t) const noexcept
    {
        return min_total != 0 && t.total >= min_total && t.type != wire::frame_type::rma_write;
    }
};

class send_scheduler {
public:
    enum class lane : std::uint8_t { control, message, data };

    explicit send_scheduler(std::size_t chunk_size) : chunk_size_(chunk_size) {}

    void push(lane l, tx_frame&& f);
    void push(lane l, transfer&& t); // message or data lane
    // Returns the payload-and-header bytes committed.
    std::size_t commit(std::deque<tx_frame>& out, std::size_t max_frames, std::size_t max_bytes, std::uint32_t& seq,
        const stripe_policy& stripes = {});
    // The largest transfer pushed so far (whether stripe lanes are worth making).
    std::size_t largest_transfer() const noexcept { return largest_transfer_; }

    bool empty() const noexcept { return control_.empty() && message_.empty() && data_.empty(); }
    std::size_t entries() const noexcept { return control_.size() + message_.size() + data_.size(); }
    // Drops everything queued (the peer failed); calls f(op*) for every
    // operation that will now never be written, and returns the number of
    // entries dropped.
    template <class F> std::size_t drop(F&& f)
    {
        const std::size_t n = entries();
        for (auto& fr : control_)
            if (fr.done != nullptr)
                f(fr.done);
        for (auto* q : {&message_, &data_})
            for (auto& e : *q) {
                op* o = std::holds_alternative<tx_frame>(e) ? std::get<tx_frame>(e).done : std::get<transfer>(e).done;
                if (o != nullptr)
                    f(o);
            }
        control_.clear();
        message_.clear();
        data_.clear();
        return n;
    }
    // Every operation the queue will complete (for freeing at close).
    template <class F> void for_each_op(F&& f) const
    {
        for (auto* q : {&message_, &data_})
            for (auto& e : *q) {
                op* o = std::holds_alternative<tx_frame>(e) ? std::get<tx_frame>(e).done : std::get<transfer>(e).done;
                if (o != nullptr)
                    f(o);
            }
    }

private:
    using entry = std::variant<tx_frame, transfer>;
    // The next frame of this lane's front entry; pops the entry when done.
    tx_frame take(std::deque<entry>& q, const stripe_policy& stripes);
    // The front entry of q is a transfer that `stripes` stripes.
    static bool striped_front(const std::deque<entry>& q, const stripe_policy& stripes) noexcept;

    std::size_t chunk_size_;
    std::deque<tx_frame> control_;
    std::deque<entry> message_;
    std::deque<entry> data_;
    bool data_turn_ = false;
    std::size_t largest_transfer_ = 0;
};

// The bytes a gather list holds.
inline std::size_t total_length(const iovec* iov, std::size_t count) noexcept
{
    std::size_t n = 0;
    for (std::size_t i = 0; i < count; ++i)
        n += iov[i].iov_len;
    return n;
}

// Points `out` at bytes [offset, offset + len) of the buffer described by
// `iov`; returns the number of entries used.
std::size_t slice(const iovec* iov, std::size_t count, std::size_t offset, std::size_t len,
    std::array<iovec, provider_iov_limit>& out);

} // namespace hashi::fi
