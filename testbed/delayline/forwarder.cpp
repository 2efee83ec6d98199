// SPDX-License-Identifier: BSD-3-Clause
#include "forwarder.hpp"

#include "clock.hpp"
#include "tap.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <system_error>

namespace hashi::delayline {
namespace {

// Frames read per wake-up before due frames get their turn, so a
// flood in does not hold back what is due out.
constexpr int receive_batch = 64;
constexpr std::int64_t loss_log_interval_ns = 1'000'000'000;

} // namespace

Forwarder::Forwarder(std::string name, int in_fd, int out_fd, int stop_fd, std::chrono::nanoseconds delay,
    std::size_t queue_bytes, LossModel loss)
    : name_(std::move(name)),
      in_fd_(in_fd),
      out_fd_(out_fd),
      stop_fd_(stop_fd),
      delay_ns_(delay.count()),
      queue_(queue_bytes),
      frame_(max_frame_bytes),
      random_(loss.seed),
      lose_(loss.probability)
{
}

void Forwarder::run()
{
    for (;;) {
        std::array<pollfd, 2> fds {{{in_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}}};
        timespec wait {};
        timespec* timeout = nullptr;
        if (!queue_.empty()) {
            const std::int64_t left = std::max<std::int64_t>(0, queue_.front_due() - now_ns());
            wait.tv_sec = left / 1'000'000'000;
            wait.tv_nsec = left % 1'000'000'000;
            timeout = &wait;
        }
        if (::ppoll(fds.data(), fds.size(), timeout, nullptr) < 0) {
            if (errno == EINTR) {
                continue;
            }
            throw std::system_error(errno, std::generic_category(), name_ + ": ppoll");
        }
        if (fds[1].revents != 0) {
            return;
        }
        if ((fds[0].revents & (POLLERR | POLLHUP | POLLNVAL)) != 0) {
            throw std::system_error(EIO, std::generic_category(), name_ + ": the input tap went away");
        }
        if ((fds[0].revents & POLLIN) != 0) {
            receive_available();
        }
        send_due();
    }
}

void Forwarder::receive_available()
{
    for (int i = 0; i < receive_batch; ++i) {
        const ssize_t n = ::read(in_fd_, frame_.data(), frame_.size());
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                return;
            }
            throw std::system_error(errno, std::generic_category(), name_ + ": reading the input tap");
        }
        if (n == 0) {
            return;
        }
        const auto len = static_cast<std::size_t>(n);
        // Decided on arrival, as a lossy link loses a frame before any
        // queue behind it sees it. The tap hands over TSO frames of up to
        // 64 KiB whole: the testbed turns segmentation offload off where
        // it asks for loss, so that a frame is one packet.
        if (lose_.p() > 0 && lose_(random_)) {
            stats_.lost_frames.add(1);
            stats_.lost_bytes.add(len);
            continue;
        }
        // Stamped on arrival, so time spent in this batch is not added.
        if (queue_.push({frame_.data(), len}, now_ns() + delay_ns_)) {
            stats_.peak_queue_bytes.raise_to(queue_.bytes());
        } else {
            stats_.dropped_frames.add(1);
            stats_.dropped_bytes.add(len);
            note_loss("queue full", stats_.dropped_frames.get());
        }
    }
}

void Forwarder::send_due()
{
    const std::int64_t now = now_ns();
    while (!queue_.empty() && queue_.front_due() <= now) {
        const auto frame = queue_.front();
        if (::write(out_fd_, frame.data(), frame.size()) == static_cast<ssize_t>(frame.size())) {
            stats_.frames.add(1);
            stats_.bytes.add(frame.size());
        } else {
            // A tap that is down or whose namespace is being torn down.
            stats_.write_errors.add(1);
            note_loss("output tap refused a frame", stats_.write_errors.get());
        }
        queue_.pop();
    }
}

void Forwarder::note_loss(const char* why, std::uint64_t total)
{
    // At most one line a second: enough to see loss, not enough to flood.
    const std::int64_t now = now_ns();
    if (last_loss_log_ns_ != 0 && now - last_loss_log_ns_ < loss_log_interval_ns) {
        return;
    }
    last_loss_log_ns_ = now;
    (void)std::fprintf(stderr, "hashi-delayline: %s: %s (%zu of %zu bytes queued), %llu frames lost so far\n",
        name_.c_str(), why, queue_.bytes(), queue_.capacity(), static_cast<unsigned long long>(total));
}

} // namespace hashi::delayline
