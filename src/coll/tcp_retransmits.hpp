// SPDX-License-Identifier: BSD-3-Clause
// How many TCP segments this process's connections have retransmitted, for
// the start-up probe: the difference over its burst of WAN flows tells
// whether the WAN bottleneck dropped (probe.cpp). The connections are the
// transport's; this only reads them.
#pragma once

#include <cstdint>
#include <optional>

namespace hashi::coll {

// The sum of TCP_INFO's tcpi_total_retrans over every TCP socket this
// process has open, or nothing when /proc/self/fd cannot be read.
std::optional<std::uint64_t> process_tcp_retransmits();

} // namespace hashi::coll
