// SPDX-License-Identifier: BSD-3-Clause
// The TCP settings of a trunk's socket, the relay's side of the WAN: the
// timeout that sees a dead link, the buffers the admin sets
// (IMPI_RELAY_SOCBUF), the congestion control the admin picks (--tcp-cc),
// and pacing at this gateway's WAN rate (--wan-rate). Contract:
// tune_trunk_socket() once per trunk socket before its handshake;
// pace_trunk_socket() whenever the number of the relay's sending trunks
// changes (trunk_pacing.hpp). Relay thread only; a setting the kernel refuses is logged by
// the caller and the trunk carries on without it.
//
// Why pace a trunk: the trunk is where a relayed job's bytes enter the
// WAN, and the ranks behind a relay do not pace their sockets to it
// (router::sends_into_wan in src/transport/engine/router.hpp). A trunk
// idle through a compute phase would send its next batch at line rate into
// the WAN's bottleneck queue. SO_MAX_PACING_RATE makes the kernel spread every
// batch at the link's rate instead, from the first segment after idle.
//
// Why bound a trunk's unsent bytes (TCP_NOTSENT_LOWAT), paced or not: the
// kernel sends a socket's bytes in the order written, so every byte it
// holds unsent is in front of the next frame the relay queues, whatever
// stream that frame is for. Left to itself the kernel holds megabytes
// (seconds at 20 Mbit/s). Bounded to about 10 ms of the trunk's rate, the
// backlog stays in the relay's queue (trunk_queue.hpp), which sends a
// stream's small frame after one frame of each other busy stream, and
// whose length stops the streams' reading.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace hashi::relay {

struct relay_config;

// TCP_NODELAY, TCP_USER_TIMEOUT (the trunk timeout), the buffers and the
// congestion control of cfg. Returns what the kernel refused (empty: all
// taken).
std::string tune_trunk_socket(int fd, const relay_config& cfg);

// The pacing rate of each of `trunks` trunks sharing a WAN link of
// `wan_rate` bytes/s (the link carries frames, the kernel paces payload:
// src/transport/send/payload_of_wire.hpp); 0 when the link's rate is not
// given (unpaced).
std::uint64_t trunk_pacing_rate(std::uint64_t wan_rate, std::size_t trunks);

// Sets SO_MAX_PACING_RATE to `rate` bytes/s (0: no limit). False with
// errno when the kernel refused.
bool pace_trunk_socket(int fd, std::uint64_t rate);

// The TCP_NOTSENT_LOWAT for a trunk sending `rate` bytes/s (its pacing
// rate, or what TCP_INFO says it delivered; 0: not known yet): 10 ms of
// it, from 16 KiB to 4 MiB; 256 KiB while the rate is not known.
int trunk_notsent_lowat(std::uint64_t rate);
// Sets it. False with errno when the kernel refused.
bool set_trunk_notsent_lowat(int fd, int bytes);

} // namespace hashi::relay
