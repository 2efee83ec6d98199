// SPDX-License-Identifier: BSD-3-Clause
// The provider's side of the collectives' WAN share (src/coll/pacing.hpp):
// when libhashi-coll is in the process and a collective announces that k
// processes of this cluster send over the WAN at once, connections to
// other clusters are paced to wan_rate / k with SO_MAX_PACING_RATE, so the
// k flows share the bottleneck instead of overflowing its queue. TCP
// paces by itself when the qdisc is not fq (Linux >= 4.13).
#pragma once

#include <cstdint>
#include <string>

struct hashi_wan_share;

namespace hashi::fi {

class wan_pacing {
public:
    // Finds the share record if libhashi-coll is loaded. FI_HASHI_WAN_PACING=0
    // turns pacing off; a malformed value sets `error`.
    bool init(std::string& error);
    bool enabled() const { return share_ != nullptr; }
    // Brings the socket's pacing rate up to date with the share, if the
    // share changed since `applied` (the connection's last generation).
    void apply(int fd, std::uint64_t& applied) const;

private:
    const hashi_wan_share* share_ = nullptr;
};

} // namespace hashi::fi
