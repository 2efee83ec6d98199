// SPDX-License-Identifier: BSD-3-Clause
// From a libfabric object to the gate of its domain (domain_gate.hpp).
#include "transport/domain_gate.hpp"

#include "transport/common.hpp"
#include "transport/endpoint.hpp"
#include "transport/objects.hpp"

namespace hashi::fi {

domain_gate* gate_of(fid_domain* d) noexcept
{
    return d != nullptr ? &owner_of<domain_obj>(d)->gate : nullptr;
}

domain_gate* gate_of(fid_ep* ep) noexcept
{
    return ep != nullptr ? &owner_of<endpoint>(ep)->domain->gate : nullptr;
}

domain_gate* gate_of(fid_cq* cq) noexcept
{
    return cq != nullptr ? &owner_of<cq_obj>(cq)->domain->gate : nullptr;
}

domain_gate* gate_of(fid_cntr* c) noexcept
{
    return c != nullptr ? &owner_of<cntr_obj>(c)->domain->gate : nullptr;
}

domain_gate* gate_of(fid_av* av) noexcept
{
    return av != nullptr ? &owner_of<av_obj>(av)->domain->gate : nullptr;
}

domain_gate* gate_of(fid_mr* mr) noexcept
{
    return mr != nullptr ? &owner_of<mr_obj>(mr)->domain->gate : nullptr;
}

domain_gate* gate_of(fid* f) noexcept
{
    if (f == nullptr)
        return nullptr;
    // The fid is the first member of each of our boxes (common.hpp).
    switch (f->fclass) {
    case FI_CLASS_EP:
        return gate_of(reinterpret_cast<fid_ep*>(f));
    case FI_CLASS_CQ:
        return gate_of(reinterpret_cast<fid_cq*>(f));
    case FI_CLASS_CNTR:
        return gate_of(reinterpret_cast<fid_cntr*>(f));
    case FI_CLASS_AV:
        return gate_of(reinterpret_cast<fid_av*>(f));
    case FI_CLASS_MR:
        return gate_of(reinterpret_cast<fid_mr*>(f));
    case FI_CLASS_DOMAIN:
        // fi_mr_reg and friends name the domain by its fid. The domain's
        // own close is never gated: the gate goes with it.
        return gate_of(reinterpret_cast<fid_domain*>(f));
    default:
        // A fabric and an event queue touch nothing the flusher does.
        return nullptr;
    }
}

} // namespace hashi::fi
