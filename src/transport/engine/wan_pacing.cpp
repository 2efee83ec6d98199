// SPDX-License-Identifier: BSD-3-Clause
#include "common/environment.hpp"
#include "transport/engine/wan_pacing.hpp"

#include "common/abi/wan_share_abi.h"
#include "transport/common.hpp"
#include "transport/engine/local_address.hpp"
#include "transport/send/payload_of_wire.hpp"
#include "transport/tcp_congestion_control.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dlfcn.h>

namespace hashi::fi {

bool wan_pacing::init(std::string& error)
{
    const auto on = hashi::env_whole("FI_HASHI_WAN_PACING", 1, {.hi = 1, .base = 10}, error);
    if (!on)
        return false;
    const auto lowat = hashi::env_whole("FI_HASHI_WAN_NOTSENT_LOWAT", 1024 * 1024, {.hi = 1ULL << 30, .base = 10}, error);
    if (!lowat)
        return false;
    notsent_lowat_ = *lowat;
    if (const auto cc = hashi::env_text("FI_HASHI_WAN_CC"); cc && !cc->empty()) {
        if (auto problem = congestion_control_problem(*cc, "FI_HASHI_WAN_CC=" + *cc); !problem.empty()) {
            error = std::move(problem);
            return false;
        }
        congestion_control_ = *cc;
    }
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

void wan_pacing::refresh(std::uint64_t now_ns)
{
    if (share_ == nullptr)
        return;
    const std::uint64_t generation = __atomic_load_n(&share_->generation, __ATOMIC_ACQUIRE);
    if (generation == generation_)
        return;
    generation_ = generation;
    ++socket_generation_;
    share_rate_ = __atomic_load_n(&share_->pace_rate, __ATOMIC_RELAXED);
    rate_ = static_cast<std::uint64_t>(static_cast<double>(share_rate_) * payload_of_wire);
    if (share_rate_ != 0 && rate_ == 0)
        rate_ = 1;
    budget_ = __atomic_load_n(&share_->wan_rate, __ATOMIC_RELAXED);
    senders_ = __atomic_load_n(&share_->senders, __ATOMIC_RELAXED);
    reason_ = __atomic_load_n(&share_->reason, __ATOMIC_RELAXED);
    if (rate_ == 0) {
        bucket_.reset();
        return;
    }
    // A burst of 10 ms at the rate (at least 128 KiB). The kernel spreads
    // what the bucket lets through at the socket's pacing rate, so the
    // burst only bounds how much a process catches up after it was off the
    // CPU; a 1 ms burst (32 KiB) starved the uncongested runs of bench/wan
    // on the oversubscribed testbed (paced/unpaced 0.5-0.6x, 2 Dec).
    const auto burst = static_cast<std::size_t>(std::max<std::uint64_t>(rate_ / 100, 128 * 1024));
    if (bucket_)
        bucket_->set_rate(rate_, now_ns);
    else
        bucket_.emplace(rate_, burst, now_ns);
}

pacer* wan_pacing::wan_pacer(std::uint64_t now_ns)
{
    refresh(now_ns);
    return bucket_ ? &*bucket_ : nullptr;
}

void wan_pacing::apply(int fd, bool& tuned, std::uint64_t& applied)
{
    if (!tuned) {
        tuned = true;
        if (notsent_lowat_ != 0) {
            const int v = static_cast<int>(notsent_lowat_);
            if (::setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &v, sizeof v) != 0)
                HASHI_DEBUG("TCP_NOTSENT_LOWAT on fd %d failed: %s", fd, std::strerror(errno));
        }
        if (!congestion_control_.empty() &&
            ::setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, congestion_control_.data(),
                static_cast<socklen_t>(congestion_control_.size())) != 0)
            log_warn("FI_HASHI_WAN_CC=%s on a WAN connection failed: %s", congestion_control_.c_str(),
                std::strerror(errno));
    }
    if (share_ == nullptr || applied == socket_generation_)
        return;
    applied = socket_generation_;
    // ~0 lifts the limit again.
    std::uint64_t pace = rate_ != 0 ? std::max<std::uint64_t>(sending_.each(rate_), 1) : ~std::uint64_t {0};
    if (::setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &pace, sizeof pace) != 0)
        HASHI_DEBUG("SO_MAX_PACING_RATE on fd %d failed: %s", fd, std::strerror(errno));
}

bool wan_pacing::sent(sending_sockets::key k, std::size_t bytes, std::uint64_t now_ns)
{
    if (rate_ == 0)
        return false;
    if (!sending_.sent(k, bytes, now_ns, rate_))
        return false;
    ++socket_generation_;
    return true;
}

bool wan_pacing::expire(std::uint64_t now_ns, const std::function<std::size_t(const sending_sockets::key&)>& unsent)
{
    if (!sending_.expire(now_ns, rate_, unsent))
        return false;
    ++socket_generation_;
    return true;
}

bool wan_pacing::forget(sending_sockets::key k)
{
    if (!sending_.forget(k))
        return false;
    ++socket_generation_;
    return true;
}

const char* wan_pacing::reason() const
{
    switch (reason_) {
    case HASHI_PACE_JOB:
        return "job";
    case HASHI_PACE_COLLECTIVE:
        return "collective";
    case HASHI_PACE_INFO_HINT:
        return "info-hint";
    case HASHI_PACE_PSP_ATTR:
        return "psp-attribute";
    default:
        return share_ == nullptr ? "off" : "none";
    }
}

} // namespace hashi::fi
