// SPDX-License-Identifier: BSD-3-Clause
// The part of a WAN link's rate that a pacer gives TCP payload, for every
// pacer of WAN traffic (the provider's per-process share, impi-relay's
// trunks).
//
// Why: a share is a rate of the link, which carries whole frames, while
// the pacers count payload (a token bucket) and TCP segments (the kernel's
// SO_MAX_PACING_RATE). Of a 1514-byte Ethernet frame 1448 bytes are
// payload (0.956), and the same link carries the acknowledgements of the
// other direction's data (2 % of it, one 66-byte frame per two segments);
// 0.92 leaves a little for the pacing timers' jitter as well. Pacing the
// payload at the whole share overfilled the bottleneck: four processes of
// a cluster at 25 Mbit/s each into a 100 Mbit/s WAN dropped 2252 frames at
// its 128 KB queue in bench/wan's FT (5 Dec).
#pragma once

namespace hashi::fi {

inline constexpr double payload_of_wire = 0.92;

} // namespace hashi::fi
