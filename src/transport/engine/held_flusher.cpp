// SPDX-License-Identifier: BSD-3-Clause
// The flusher thread (held_flusher.hpp has the contract and the why).
#include "transport/engine/held_flusher.hpp"

#include "transport/common.hpp"
#include "transport/domain_gate.hpp"
#include "transport/engine/log_limiter.hpp"

#include <pthread.h>

#include <chrono>

namespace hashi::fi {

namespace {

// Set by the destructor: wakes a sleeping thread, which then sees stop_.
constexpr std::uint64_t stop_mark = 1;

} // namespace

held_flusher::held_flusher(domain_gate& gate, std::function<std::uint64_t(std::uint64_t)> flush)
    : gate_(gate), flush_(std::move(flush))
{
    thread_ = std::thread([this] { run(); });
    pthread_setname_np(thread_.native_handle(), "hashi-flusher");
}

held_flusher::~held_flusher()
{
    stop_.store(true, std::memory_order_seq_cst);
    oldest_.store(stop_mark, std::memory_order_seq_cst);
    oldest_.notify_all();
    thread_.join();
}

void held_flusher::run()
{
    for (;;) {
        if (stop_.load(std::memory_order_seq_cst))
            return;
        const std::uint64_t oldest = oldest_.load(std::memory_order_seq_cst);
        if (oldest == 0) {
            // Nothing held: sleep until the application holds a send. The
            // second look after raising asleep_ pairs with note_hold's store
            // then load, so no hold goes unseen.
            asleep_.store(true, std::memory_order_seq_cst);
            if (oldest_.load(std::memory_order_seq_cst) == 0 && !stop_.load(std::memory_order_seq_cst))
                oldest_.wait(0, std::memory_order_seq_cst);
            asleep_.store(false, std::memory_order_seq_cst);
            continue;
        }
        const std::uint64_t now = monotonic_ns();
        if (now < oldest + bound_ns) {
            std::this_thread::sleep_for(std::chrono::nanoseconds(oldest + bound_ns - now));
            continue;
        }
        // The application is inside the provider: whatever it does there
        // (a wait, a test, a receive) writes what is held itself, or it
        // holds more and returns; look again soon.
        if (!gate_.try_flusher()) {
            std::this_thread::sleep_for(std::chrono::nanoseconds(bound_ns / 8));
            continue;
        }
        // Inside the gate the application holds nothing new, so what
        // flush_ reports is the whole truth until the gate opens again.
        std::uint64_t left = 0;
        try {
            left = flush_(now);
        } catch (const std::exception& e) {
            // Nothing may leave the thread; what stays held goes at the
            // application's next call.
            log_error("the thread that writes held sends: %s", e.what());
        } catch (...) {
            log_error("the thread that writes held sends: an unknown error");
        }
        oldest_.store(left, std::memory_order_seq_cst);
        gate_.leave_flusher();
    }
}

} // namespace hashi::fi
