// SPDX-License-Identifier: BSD-3-Clause
// What the selector hands an algorithm besides the call's arguments: how
// many processes may send over the WAN at once and how finely to pipeline.
#pragma once

#include <cstddef>

namespace hashi::coll {

struct Tuning {
    // Cap on concurrent WAN senders per direction between two clusters
    // (k* = B_wan / B_flow rounded, from the link parameters, or forced with
    // HASHI_COLL_WAN_SENDERS). Algorithms run at most this many lanes
    // across the WAN at once. At least 1.
    int wan_senders = 1;
    // Pipelining: the message is cut into segments of about this many
    // bytes (0 = no pipelining). Algorithms round it to whole elements.
    std::size_t segment_bytes = 0;
    // One-way WAN latency of the link parameters, in seconds: what a WAN
    // message takes to arrive. The hierarchical barrier holds the release
    // of a cluster whose leader heard the others first for about this long,
    // so that every cluster is released at the same time (0: no hold).
    double wan_latency = 0;
};

} // namespace hashi::coll
