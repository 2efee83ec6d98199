// SPDX-License-Identifier: BSD-3-Clause
// How this process tells the transport how fast it may send over the WAN,
// so that the processes of a cluster share the WAN bottleneck instead of
// all bursting at line rate into its queue (Takano et al., Cluster 2007:
// the rate of a sender = the WAN budget B / the senders that send at once).
//
// The rate lives in a small process-wide record that libhashi-coll exports
// under a C name (hashi_coll_wan_share, common/abi/wan_share_abi.h); the
// `hashi` provider finds it with dlsym(RTLD_DEFAULT) and paces all its
// traffic to other clusters to it, point-to-point included: a token bucket
// over the process's WAN connections and SO_MAX_PACING_RATE on each.
// Other providers ignore it; the cap on concurrent senders that the
// algorithms keep is what protects the WAN then.
//
// Three sources set the rate, the latest wins until a collective phase:
// - the job (set_job_pacing at MPI_Init): HASHI_WAN_RATE or the measured
//   WAN rate, divided by HASHI_WAN_SENDERS (default 1: the whole budget);
// - hints (hints.cpp): info keys and GridMPI's PSP attributes;
// - a collective's WAN phase (WanShare), for as long as the phase runs.
#pragma once

#include "hierarchy.hpp"

#include <cstdint>

namespace hashi::coll {

// Why a process paces (the values of enum hashi_wan_pace_reason).
enum class PaceReason : std::uint32_t { none = 0, job = 1, collective = 2, info_hint = 3, psp_attribute = 4 };

struct Pacing {
    std::uint64_t wan_rate = 0; // bytes/s of the WAN budget, 0 = unknown
    std::uint32_t senders = 0; // the senders it is shared by
    std::uint64_t pace_rate = 0; // bytes/s for this process, 0 = no limit
    PaceReason reason = PaceReason::none;
};

// wan_rate / senders, or no limit when either is 0.
Pacing share_of(std::uint64_t wan_rate, std::uint32_t senders, PaceReason why);

// The pacing outside collective phases; published at once.
void set_base_pacing(const Pacing& p);
const Pacing& base_pacing();

// At MPI_Init, after the link parameters are known: the job's budget.
void set_job_pacing(const Hierarchy& world);
// The concurrent WAN senders of the job (HASHI_WAN_SENDERS, or 1).
std::uint32_t job_senders();

// hints.cpp: the keyvals of GridMPI's PSP attributes (yampi_psp.h), made
// at MPI_Init.
void create_psp_keyvals();

// While alive, this process is one of `senders` processes of its cluster
// sending over the WAN at once. Nests; the innermost share wins.
class WanShare {
public:
    WanShare(const Hierarchy& h, int senders);
    ~WanShare();
    WanShare(const WanShare&) = delete;
    WanShare& operator=(const WanShare&) = delete;

private:
    Pacing previous_;
    bool active_;
};

} // namespace hashi::coll
