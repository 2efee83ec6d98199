// SPDX-License-Identifier: BSD-3-Clause
#include "pacing.hpp"

#include "common/abi/wan_share_abi.h"
#include "link_params.hpp"
#include "settings.hpp"

#include <cstdio>

// Exported under a C name for the provider (the contract is in common/abi/wan_share_abi.h).
extern "C" {
__attribute__((visibility("default"))) hashi_wan_share hashi_coll_wan_share = {HASHI_WAN_SHARE_ABI, 0, 0, 0, 0, 0, 0};
}

namespace hashi::coll {

namespace {

Pacing base; // outside collective phases
Pacing published; // what the record holds now
std::uint32_t senders_of_job = 1;
int phases = 0; // WanShares alive

// The link parameters were measured or configured, not the built-in guess.
bool link_params_known()
{
    return link_params().source != LinkParams {}.source;
}

// A share at or above what the node's own link carries cannot bind, so
// none is published and the provider paces nothing (once a socket has any
// limit the kernel also paces it at its window's rate). Only with a node
// rate measured or configured: the built-in one is a guess, and below a
// real 1000 Mbit/s link it would leave a congested WAN's point-to-point
// traffic unpaced.
bool binds(std::uint64_t pace_rate)
{
    return pace_rate != 0 && (!link_params_known() || static_cast<double>(pace_rate) < link_params().node_rate);
}

void publish(const Pacing& p)
{
    published = p;
    __atomic_store_n(&hashi_coll_wan_share.wan_rate, p.wan_rate, __ATOMIC_RELAXED);
    __atomic_store_n(&hashi_coll_wan_share.senders, p.senders, __ATOMIC_RELAXED);
    __atomic_store_n(&hashi_coll_wan_share.pace_rate, binds(p.pace_rate) ? p.pace_rate : 0, __ATOMIC_RELAXED);
    __atomic_store_n(&hashi_coll_wan_share.reason, static_cast<std::uint32_t>(p.reason), __ATOMIC_RELAXED);
    __atomic_fetch_add(&hashi_coll_wan_share.generation, 1, __ATOMIC_RELEASE);
}

} // namespace

Pacing share_of(std::uint64_t wan_rate, std::uint32_t senders, PaceReason why)
{
    if (wan_rate == 0 || senders == 0)
        return {};
    return {wan_rate, senders, wan_rate / senders, why};
}

void set_base_pacing(const Pacing& p)
{
    base = p;
    publish(p);
}

const Pacing& base_pacing()
{
    return base;
}

void set_job_pacing(const Hierarchy& world)
{
    const Settings& s = settings();
    // A budget the user gave, else the WAN rate measured or configured;
    // the built-in defaults are a guess, not a budget.
    std::uint64_t budget = s.wan_rate_mbit * 125'000ULL;
    if (budget == 0 && link_params_known())
        budget = static_cast<std::uint64_t>(link_params().wan_rate);
    // Outside collectives no one knows how many processes of a cluster send
    // at once, so unless the user says (HASHI_WAN_SENDERS, the hints) a
    // process may have the whole budget, split over its sockets sending
    // (the provider's wan_pacing): the kernel then paces each at most at
    // that and at its own window's rate, which spreads the window a
    // connection kept through a compute phase. Dividing by the processes
    // of the cluster instead held a halo exchange whose two WAN senders
    // per cluster had half the WAN to a quarter each: bench/wan's MG ran
    // at 0.59x unpaced on 5 Dec, and 0.97x with one sender. Collectives,
    // which know their senders, hold their WanShare.
    const auto senders = static_cast<std::uint32_t>(s.job_wan_senders != 0 ? s.job_wan_senders : 1);
    senders_of_job = senders;
    set_base_pacing(share_of(budget, senders, PaceReason::job));
    if (s.verbose >= 1 && world.rank == 0)
        std::fprintf(stderr, "hashi-coll: WAN pacing: %.1f Mbit/s per process (%.1f Mbit/s shared by %u senders)%s\n",
            static_cast<double>(base.pace_rate) * 8e-6, static_cast<double>(budget) * 8e-6, senders,
            base.pace_rate != 0 && !binds(base.pace_rate) ? ", not below a node's link: nothing paced outside collectives"
                : "");
}

std::uint32_t job_senders()
{
    return senders_of_job;
}

WanShare::WanShare(const Hierarchy& h, int senders) : previous_(published), active_(h.nclusters > 1)
{
    // Nothing crosses a WAN: leave the share alone.
    if (!active_)
        return;
    ++phases;
    publish(share_of(static_cast<std::uint64_t>(link_params().wan_rate),
        static_cast<std::uint32_t>(senders < 1 ? 1 : senders), PaceReason::collective));
}

WanShare::~WanShare()
{
    if (!active_)
        return;
    // Shares that overlap without nesting (one made, another made, the
    // first gone) must not leave a phase's rate behind: the last one gone
    // goes back to the base.
    publish(--phases == 0 ? base : previous_);
}

} // namespace hashi::coll
