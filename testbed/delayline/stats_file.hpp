// SPDX-License-Identifier: BSD-3-Clause
// The delay line's counts as a file another program reads while it runs
// (hashi-testbed stats): written on request (SIGUSR2), replaced atomically,
// so a reader sees one whole snapshot or the previous one.
#pragma once

#include "forwarder.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace hashi::delayline {

struct NamedDirection {
    std::string label; // a_to_b or b_to_a
    std::string from; // netns/ifname of the input tap
    std::string to;
    const DirectionStats* stats;
};

// Format, one KEY=VALUE word list a line (values never contain spaces):
//   snapshot=N
//   direction=a_to_b from=NS/IF to=NS/IF frames=.. bytes=.. lost_frames=..
//     lost_bytes=.. queue_drop_frames=.. queue_drop_bytes=.. write_errors=..
//     peak_queue_bytes=..
// `snapshot` counts the snapshots written, so a reader that asked for one
// knows when it is there. Throws std::system_error when PATH cannot be written.
void write_stats_file(const std::string& path, std::uint64_t snapshot, const std::vector<NamedDirection>& directions);

} // namespace hashi::delayline
