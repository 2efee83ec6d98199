// SPDX-License-Identifier: BSD-3-Clause
#include "pacing.hpp"

#include "common/abi/wan_share_abi.h"
#include "link_params.hpp"

// Exported under a C name for the provider (the contract is in common/abi/wan_share_abi.h).
extern "C" {
__attribute__((visibility("default"))) hashi_wan_share hashi_coll_wan_share = {HASHI_WAN_SHARE_ABI, 0, 0, 0};
}

namespace hashi::coll {

namespace {
void publish(int senders)
{
    __atomic_store_n(
        &hashi_coll_wan_share.wan_rate, static_cast<std::uint64_t>(link_params().wan_rate), __ATOMIC_RELAXED);
    __atomic_store_n(&hashi_coll_wan_share.senders, static_cast<std::uint32_t>(senders), __ATOMIC_RELAXED);
    __atomic_fetch_add(&hashi_coll_wan_share.generation, 1, __ATOMIC_RELEASE);
}
} // namespace

WanShare::WanShare(const Hierarchy& h, int senders)
    : previous_(static_cast<int>(__atomic_load_n(&hashi_coll_wan_share.senders, __ATOMIC_RELAXED)))
{
    if (h.nclusters > 1)
        publish(senders < 1 ? 1 : senders);
    else
        previous_ = -1; // nothing crosses a WAN: leave the share alone
}

WanShare::~WanShare()
{
    if (previous_ >= 0)
        publish(previous_);
}

} // namespace hashi::coll
