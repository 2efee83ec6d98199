// SPDX-License-Identifier: BSD-3-Clause
// The frames a trunk has yet to send, and the order they leave in.
//
// Contract: frames leave in this order: control frames (credits, opens and
// their answers, heartbeats, pings) first, in the order queued; then the
// express frames: a stream's frame of at most small_frame bytes queued
// while that stream had nothing queued; then the streams' other frames,
// one frame of each stream with something queued in turn (round robin);
// the job's end after everything else. One stream's frames (its data,
// then its close) are never reordered, so a close never overtakes its data.
// Relay thread only; no locks.
//
// Why not one first-in, first-out queue: a trunk is one TCP connection
// carrying every rank pair's stream of its cluster pair. Behind a bulk
// transfer, a FIFO holds the trunk's whole backlog (megabytes: seconds
// at a WAN link's 20 Mbit/s) in front of every small frame that follows:
// another rank pair's rendezvous answer, a stream's credit, a liveness
// heartbeat. A rendezvous of the provider waits a round trip for its
// answer, so a sender of large messages behind a loaded trunk idled for
// that backlog on every message (bench/relay/README.md, "Trunk
// scheduling"). Here a small message of an otherwise quiet rank pair (a
// rendezvous answer, an 8-byte send) waits only for the control and
// express frames before it, at most one per stream; a bulk frame for one
// frame of each other busy stream. Express frames cannot starve the
// others: a stream has at most one queued, and only while it has nothing
// else queued.
#pragma once

#include "relay/relay/byte_buffer.hpp"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace hashi::relay {

class trunk_queue {
public:
    // The largest frame (header included) that may go express: an MPI
    // message's control bytes and small payloads, not a bulk transfer's.
    static constexpr std::size_t small_frame = 2048;

    void push_control(byte_buffer f);
    // A frame of stream `id` (its data, or its close).
    void push_stream(std::uint32_t id, byte_buffer f);
    // The job's end: leaves once nothing else is queued.
    void push_last(byte_buffer f);

    struct next {
        byte_buffer frame;
        // The stream whose last queued frame this was, if any: that stream
        // may queue again (trunk::may_queue).
        std::optional<std::uint32_t> emptied;
    };
    // The next frame to send, or nothing when the queue is empty.
    std::optional<next> pop();

    [[nodiscard]] bool empty() const
    {
        return control_.empty() && express_.empty() && turn_.empty() && last_.empty();
    }
    [[nodiscard]] std::size_t bytes() const { return bytes_; } // every frame queued, whole
    // Has stream `id` a frame queued (express or not)?
    [[nodiscard]] bool has(std::uint32_t id) const { return streams_.count(id) != 0 || express_ids_.count(id) != 0; }
    [[nodiscard]] std::size_t busy_streams() const { return turn_.size(); } // with non-express frames
    [[nodiscard]] std::size_t express_frames() const { return express_.size(); }

private:
    struct express_frame {
        std::uint32_t id;
        byte_buffer frame;
    };
    std::deque<byte_buffer> control_, last_;
    std::deque<express_frame> express_;
    std::unordered_set<std::uint32_t> express_ids_; // streams with an express frame queued (one each)
    std::unordered_map<std::uint32_t, std::deque<byte_buffer>> streams_; // streams with other frames queued
    std::deque<std::uint32_t> turn_; // those streams, next to send first
    std::size_t bytes_ = 0;
};

} // namespace hashi::relay
