// SPDX-License-Identifier: BSD-3-Clause
#include "scash/stats.hpp"

namespace hashi::scash {

scash_stats_t Stats::snapshot() const
{
    scash_stats_t s {};
    s.read_faults = read_faults.load();
    s.write_faults = write_faults.load();
    s.pages_fetched = pages_fetched.load();
    s.diffs_sent = diffs_sent.load();
    s.diff_bytes = diff_bytes.load();
    s.home_moves = home_moves.load();
    s.invalidations = invalidations.load();
    s.barriers = barriers.load();
    s.lock_acquires = lock_acquires.load();
    s.messages = messages.load();
    s.bytes = bytes.load();
    return s;
}

} // namespace hashi::scash
