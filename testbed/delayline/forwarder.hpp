// SPDX-License-Identifier: BSD-3-Clause
// One direction of a delay line: frames read from one tap are written to
// the other `delay` later, in the order they came.
#pragma once

#include "frame_queue.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace hashi::delayline {

struct DirectionStats {
    std::uint64_t frames = 0;
    std::uint64_t bytes = 0;
    std::uint64_t dropped_frames = 0; // queue full
    std::uint64_t dropped_bytes = 0;
    std::uint64_t write_errors = 0; // the output tap refused a frame
    std::size_t peak_queue_bytes = 0;
};

class Forwarder {
public:
    // `name` appears in log lines ("c0gw/wan0 -> wan/c0"). `stop_fd` is an
    // eventfd; run() returns once it becomes readable.
    Forwarder(
        std::string name, int in_fd, int out_fd, int stop_fd, std::chrono::nanoseconds delay, std::size_t queue_bytes);

    // Sleeps in ppoll until a frame arrives or the oldest one is due, so an
    // idle delay line costs no CPU. Throws std::system_error on a failure
    // of the taps themselves (e.g. a namespace deleted under it).
    void run();

    [[nodiscard]] const DirectionStats& stats() const noexcept { return stats_; }
    [[nodiscard]] const std::string& name() const noexcept { return name_; }

private:
    void receive_available();
    void send_due();
    void note_loss(const char* why, std::uint64_t total);

    std::string name_;
    int in_fd_;
    int out_fd_;
    int stop_fd_;
    std::int64_t delay_ns_;
    FrameQueue queue_;
    std::vector<std::byte> frame_;
    DirectionStats stats_;
    std::int64_t last_loss_log_ns_ = 0;
};

} // namespace hashi::delayline
