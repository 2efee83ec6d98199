// SPDX-License-Identifier: BSD-3-Clause
// The domain: opens the other objects, owns the memory-region table and
// drives progress for every endpoint on it.
#include "common/environment.hpp"
#include "transport/domain_gate.hpp"
#include "transport/endpoint.hpp"
#include "transport/engine/local_address.hpp"
#include "transport/objects.hpp"

#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <sched.h>

namespace hashi::fi {

namespace {

int domain_close(fid* f)
{
    auto* dom = owner_of<domain_obj>(reinterpret_cast<fid_domain*>(f));
    if (dom->refs > 0)
        return -FI_EBUSY;
    dom->fabric->refs--;
    delete dom;
    return 0;
}

fi_ops domain_fid_ops = {
    .size = sizeof(fi_ops),
    .close = domain_close,
    .bind = no_bind,
    .control = no_control,
    .ops_open = no_ops_open,
    .tostr = no_tostr,
    .ops_set = no_ops_set,
};

int no_scalable_ep(fid_domain*, fi_info*, fid_ep**, void*)
{
    return -FI_ENOSYS;
}
int no_poll_open(fid_domain*, fi_poll_attr*, fid_poll**)
{
    return -FI_ENOSYS;
}
int no_stx_ctx(fid_domain*, fi_tx_attr*, fid_stx**, void*)
{
    return -FI_ENOSYS;
}
int no_srx_ctx(fid_domain*, fi_rx_attr*, fid_ep**, void*)
{
    return -FI_ENOSYS;
}
int no_query_atomic(fid_domain*, fi_datatype, fi_op, fi_atomic_attr*, std::uint64_t)
{
    return -FI_EOPNOTSUPP;
}
int no_query_collective(fid_domain*, fi_collective_op, fi_collective_attr*, std::uint64_t)
{
    return -FI_ENOSYS;
}
int endpoint2(fid_domain* domain, fi_info* info, fid_ep** ep, std::uint64_t flags, void* context)
{
    if (flags != 0)
        return -FI_EBADFLAGS;
    return endpoint_open(domain, info, ep, context);
}

fi_ops_domain domain_ops = {
    .size = sizeof(fi_ops_domain),
    .av_open = gated<av_open>,
    .cq_open = gated<cq_open>,
    .endpoint = gated<endpoint_open>,
    .scalable_ep = no_scalable_ep,
    .cntr_open = gated<cntr_open>,
    .poll_open = no_poll_open,
    .stx_ctx = no_stx_ctx,
    .srx_ctx = no_srx_ctx,
    .query_atomic = no_query_atomic,
    .query_collective = no_query_collective,
    .endpoint2 = gated<endpoint2>,
};

} // namespace

void domain_obj::start_flusher()
{
    if (flusher)
        return;
    flusher = std::make_unique<held_flusher>(gate, [this](std::uint64_t now) {
        std::uint64_t oldest = 0;
        for (endpoint* ep : endpoints) {
            const std::uint64_t t = ep->flush_held(now, held_flusher::bound_ns);
            if (t != 0 && (oldest == 0 || t < oldest))
                oldest = t;
        }
        return oldest;
    });
}

bool domain_obj::progress()
{
    bool moved = false;
    for (endpoint* ep : endpoints)
        moved |= ep->progress();
    // Oversubscription is the normal case (8 ranks on 2 cores in the
    // testbed) and MPICH polls without pause: once a wait has gone on for
    // its spin, give the core to whoever has work, by a yield or a
    // short sleep as the last yield showed (engine/idle_wait.hpp).
    const auto clock = [] {
        return std::uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::steady_clock::now().time_since_epoch()).count());
    };
    const std::uint64_t now = clock();
    if (census) {
        const bool was = idle.crowded();
        idle.sharing(census->ranks(), census->cpus());
        if (idle.crowded() != was)
            HASHI_DEBUG("idle: %u ranks of the job on this machine, %u CPUs: spin %llu us before giving the core away",
                        idle.ranks_seen(), idle.cpus_seen(), (unsigned long long)(idle.spin_ns() / 1000));
    }
    switch (const auto what = idle.after_poll(now, moved)) {
    case idle_wait::action::spin:
        break;
    case idle_wait::action::yield:
        sched_yield();
        idle.gave_away(what, clock() - now);
        break;
    case idle_wait::action::nap: {
        const timespec nap {0, long(idle_wait::nap_ns)};
        nanosleep(&nap, nullptr);
        idle.gave_away(what, clock() - now);
        break;
    }
    }
    return moved;
}

int domain_open(fid_fabric* fabric, fi_info* info, fid_domain** out, void* context)
{
    return guarded([&]() -> int {
        if (info != nullptr && info->domain_attr != nullptr && info->domain_attr->name != nullptr &&
            std::strcmp(info->domain_attr->name, "hashi0") != 0)
            return -FI_EINVAL;
        std::string err;
        // Unset, the spin is chosen from what the rank observes, which
        // includes the job's census on this machine (engine/idle_wait.hpp);
        // set, it is fixed.
        const bool fixed_spin = std::getenv("FI_HASHI_SPIN_US") != nullptr;
        const auto spin = hashi::env_whole("FI_HASHI_SPIN_US", 50, {.hi = 10'000'000, .base = 10}, err);
        if (!spin) {
            log_error("cannot open the domain: %s", err.c_str());
            return -FI_EINVAL;
        }
        auto* dom = new domain_obj;
        if (fixed_spin) {
            dom->idle = idle_wait(std::uint64_t(*spin) * 1000);
        } else if (const char* hex = std::getenv(job_key::variable)) {
            // A malformed key is the endpoint's error to report.
            if (const auto key = job_key::from_hex(hex))
                dom->census = std::make_unique<machine_census>(*key);
        }
        dom->fabric = owner_of<fabric_obj>(fabric);
        dom->fabric->refs++;
        dom->box.owner = dom;
        dom->box.fid.fid.fclass = FI_CLASS_DOMAIN;
        dom->box.fid.fid.context = context;
        dom->box.fid.fid.ops = &domain_fid_ops;
        dom->box.fid.ops = &domain_ops;
        dom->box.fid.mr = &mr_ops;
        *out = &dom->box.fid;
        return 0;
    });
}

} // namespace hashi::fi
