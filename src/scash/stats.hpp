// SPDX-License-Identifier: BSD-3-Clause
// Statistics of one process. Atomic because the service thread counts the
// messages it sends while the application thread counts its faults.
#ifndef HASHI_SCASH_STATS_HPP
#define HASHI_SCASH_STATS_HPP

#include "scash/scash.h"

#include <atomic>
#include <cstdint>

namespace hashi::scash {

struct Stats {
    std::atomic<std::uint64_t> read_faults {0}, write_faults {0}, pages_fetched {0}, diffs_sent {0}, diff_bytes {0},
        home_moves {0}, invalidations {0}, barriers {0}, lock_acquires {0}, messages {0}, bytes {0};

    void count_message(std::uint64_t n_bytes)
    {
        messages.fetch_add(1, std::memory_order_relaxed);
        bytes.fetch_add(n_bytes, std::memory_order_relaxed);
    }
    scash_stats_t snapshot() const;
};

} // namespace hashi::scash
#endif
