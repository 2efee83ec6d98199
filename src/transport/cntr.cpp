// SPDX-License-Identifier: BSD-3-Clause
// Counters. MPICH tracks RMA completion with one: it must rise by exactly one
// for every read, write or inject-write once that operation is complete at
// the target, and reading it drives progress.
#include "transport/domain_gate.hpp"
#include "transport/objects.hpp"

#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include <chrono>

namespace hashi::fi {

namespace {

int cntr_close(fid* f)
{
    auto* c = owner_of<cntr_obj>(reinterpret_cast<fid_cntr*>(f));
    if (c->refs > 0)
        return -FI_EBUSY;
    c->domain->refs--;
    delete c;
    return 0;
}

int cntr_control(fid*, int command, void*)
{
    return command == FI_GETWAIT ? -FI_ENODATA : -FI_ENOSYS;
}

fi_ops cntr_fid_ops = {
    .size = sizeof(fi_ops),
    .close = gated<cntr_close>,
    .bind = no_bind,
    .control = gated<cntr_control>,
    .ops_open = no_ops_open,
    .tostr = no_tostr,
    .ops_set = no_ops_set,
};

std::uint64_t cntr_read(fid_cntr* f)
{
    auto* c = owner_of<cntr_obj>(f);
    guarded([&] { return c->domain->progress() ? 1 : 0; });
    return c->value;
}

std::uint64_t cntr_readerr(fid_cntr* f)
{
    auto* c = owner_of<cntr_obj>(f);
    return c->errors;
}

int cntr_add(fid_cntr* f, std::uint64_t v)
{
    owner_of<cntr_obj>(f)->value += v;
    return 0;
}
int cntr_set(fid_cntr* f, std::uint64_t v)
{
    owner_of<cntr_obj>(f)->value = v;
    return 0;
}
int cntr_adderr(fid_cntr* f, std::uint64_t v)
{
    owner_of<cntr_obj>(f)->errors += v;
    return 0;
}
int cntr_seterr(fid_cntr* f, std::uint64_t v)
{
    owner_of<cntr_obj>(f)->errors = v;
    return 0;
}

int cntr_wait(fid_cntr* f, std::uint64_t threshold, int timeout_ms)
{
    auto* c = owner_of<cntr_obj>(f);
    const std::uint64_t errors_before = c->errors;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
        const int r = guarded([&] { return c->domain->progress() ? 1 : 0; });
        if (r < 0)
            return r;
        if (c->value >= threshold)
            return 0;
        if (c->errors != errors_before)
            return -FI_EAVAIL;
        if (timeout_ms >= 0 && std::chrono::steady_clock::now() >= deadline)
            return -FI_ETIMEDOUT;
    }
}

fi_ops_cntr cntr_ops = {
    .size = sizeof(fi_ops_cntr),
    .read = gated<cntr_read>,
    .readerr = gated<cntr_readerr>,
    .add = gated<cntr_add>,
    .set = gated<cntr_set>,
    .wait = gated<cntr_wait>,
    .adderr = gated<cntr_adderr>,
    .seterr = gated<cntr_seterr>,
};

} // namespace

int cntr_open(fid_domain* domain, fi_cntr_attr* attr, fid_cntr** out, void* context)
{
    return guarded([&]() -> int {
        auto* dom = owner_of<domain_obj>(domain);
        if (attr != nullptr && attr->events != FI_CNTR_EVENTS_COMP)
            return -FI_ENOSYS;
        if (attr != nullptr && attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC)
            return -FI_ENOSYS;
        auto* c = new cntr_obj;
        c->box.owner = c;
        c->domain = dom;
        c->box.fid.fid.fclass = FI_CLASS_CNTR;
        c->box.fid.fid.context = context;
        c->box.fid.fid.ops = &cntr_fid_ops;
        c->box.fid.ops = &cntr_ops;
        dom->refs++;
        *out = &c->box.fid;
        return 0;
    });
}

} // namespace hashi::fi
