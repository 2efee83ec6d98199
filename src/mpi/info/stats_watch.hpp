// SPDX-License-Identifier: BSD-3-Clause
// `hashi-info --stats DIR --watch`: a running job's figures, refreshed in
// place. The ranks rewrite their statistics files every 2 s while they
// make progress (FI_HASHI_STATS_DIR), impi-relay its trunk files every 2 s
// (--stats-dir); each refresh reads them again and adds how fast every
// peer sent and received since the last one.
#pragma once

#include "mpi/info/stats_summary.hpp"

#include <iosfwd>
#include <string>

namespace hashi {

struct WatchSettings {
    std::string dir;
    double interval_s = 2; // between refreshes
    long count = 0; // refreshes before returning; 0: until SIGINT, SIGTERM or SIGHUP
    bool in_place = true; // clear the terminal for each refresh; else one block after another
    StatsView view = StatsView::traffic; // tcp: the TCP_INFO table (no rates) instead
};

// Returns 0 when stopped by a signal or after `count` refreshes, 1 when
// DIR is not a directory or a file cannot be read (said on `err`).
int watch_stats(const WatchSettings& settings, std::ostream& out, std::ostream& err);

} // namespace hashi
