// SPDX-License-Identifier: BSD-3-Clause
// One direction of a delay line: frames read from one tap are written to
// the other `delay` later, in the order they came.
#pragma once

#include "frame_queue.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace hashi::delayline {

// A count written by one forwarding thread and read by main for a
// snapshot (SIGUSR2) while it runs: relaxed loads and stores and no
// read-modify-write, so counting costs what a plain add does.
class Counter {
public:
    void add(std::uint64_t n) noexcept
    {
        value_.store(value_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }
    void raise_to(std::uint64_t n) noexcept
    {
        if (n > value_.load(std::memory_order_relaxed)) {
            value_.store(n, std::memory_order_relaxed);
        }
    }
    [[nodiscard]] std::uint64_t get() const noexcept { return value_.load(std::memory_order_relaxed); }

private:
    std::atomic<std::uint64_t> value_ {0};
};

struct DirectionStats {
    Counter frames;
    Counter bytes;
    Counter lost_frames; // dropped at random (--loss)
    Counter lost_bytes;
    Counter dropped_frames; // queue full
    Counter dropped_bytes;
    Counter write_errors; // the output tap refused a frame
    Counter peak_queue_bytes;
};

// Random loss: each frame independently with probability `probability`.
struct LossModel {
    double probability = 0;
    std::uint64_t seed = 1;
};

class Forwarder {
public:
    // `name` appears in log lines ("c0gw/wan0 -> wan/c0"). `stop_fd` is an
    // eventfd; run() returns once it becomes readable.
    Forwarder(std::string name, int in_fd, int out_fd, int stop_fd, std::chrono::nanoseconds delay,
        std::size_t queue_bytes, LossModel loss = {});

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
    std::mt19937_64 random_;
    std::bernoulli_distribution lose_;
    std::int64_t last_loss_log_ns_ = 0;
};

} // namespace hashi::delayline
