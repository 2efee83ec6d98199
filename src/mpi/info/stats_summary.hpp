// SPDX-License-Identifier: BSD-3-Clause
// `hashi-info --stats DIR`: sums up the per-peer statistics files the hashi
// provider writes when FI_HASHI_STATS_DIR is set (one file per endpoint).
#pragma once

#include <iosfwd>
#include <string>

namespace hashi {

// Prints one line per endpoint and peer and the job's totals. Returns 0, or
// 1 with a message on `err` naming the file and line that could not be read.
int print_stats_summary(const std::string& dir, std::ostream& out, std::ostream& err);

} // namespace hashi
