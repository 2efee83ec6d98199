// SPDX-License-Identifier: BSD-3-Clause
#include "common/environment.hpp"
#include "transport/engine/wan_pacing.hpp"

#include "common/abi/wan_share_abi.h"
#include "transport/common.hpp"
#include "transport/engine/local_address.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <dlfcn.h>

namespace hashi::fi {

bool wan_pacing::init(std::string& error)
{
    const auto on = hashi::env_whole("FI_HASHI_WAN_PACING", 1, {.hi = 1, .base = 10}, error);
    if (!on)
        return false;
    share_ = nullptr;
    if (*on == 0)
        return true;
    // Global lookup: libhashi-coll is linked into the program, we are a
    // module libfabric opened.
    const auto* s = static_cast<const hashi_wan_share*>(::dlsym(RTLD_DEFAULT, "hashi_coll_wan_share"));
    if (s != nullptr && s->abi == HASHI_WAN_SHARE_ABI)
        share_ = s;
    return true;
}

void wan_pacing::apply(int fd, std::uint64_t& applied) const
{
    const std::uint64_t generation = __atomic_load_n(&share_->generation, __ATOMIC_ACQUIRE);
    if (generation == applied)
        return;
    applied = generation;
    const std::uint32_t senders = __atomic_load_n(&share_->senders, __ATOMIC_RELAXED);
    const std::uint64_t rate = __atomic_load_n(&share_->wan_rate, __ATOMIC_RELAXED);
    // ~0 lifts the limit again when no collective WAN phase runs.
    std::uint64_t pace = (senders != 0 && rate != 0) ? rate / senders : ~std::uint64_t {0};
    if (::setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &pace, sizeof pace) != 0)
        HASHI_DEBUG("SO_MAX_PACING_RATE on fd %d failed: %s", fd, std::strerror(errno));
}

} // namespace hashi::fi
