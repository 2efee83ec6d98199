// SPDX-License-Identifier: BSD-3-Clause
// fi_getinfo for hashi. MPICH calls it twice: first with no hints (version
// 0) to score providers, then with hints built from its capability set; the
// rules for the second call are in doc/research notes (provider_requirements)
// and summarized where they are applied below.
#include "transport/info.hpp"

#include "transport/address.hpp"
#include "transport/common.hpp"

#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include <cstdint>
#include <cstring>

namespace hashi::fi {

namespace {

fi_info* make_info(const fi_info* hints)
{
    fi_info* info = fi_allocinfo();
    if (info == nullptr)
        return nullptr;
    info->caps = provider_caps;
    info->mode = 0; // we need no FI_CONTEXT space and no message prefix
    info->addr_format = FI_FORMAT_UNSPEC;
    info->nic = nullptr; // MPICH dereferences nic's link attributes when present

    info->ep_attr->type = FI_EP_RDM;
    info->ep_attr->protocol = FI_PROTO_UNSPEC;
    // Large enough that MPICH never takes its "huge message" path: the
    // provider's own rendezvous carries messages of any size.
    info->ep_attr->max_msg_size = SIZE_MAX >> 1;
    info->ep_attr->msg_prefix_size = 0;
    info->ep_attr->max_order_raw_size = 0;
    info->ep_attr->max_order_war_size = 0;
    info->ep_attr->max_order_waw_size = 0;
    info->ep_attr->mem_tag_format = ~std::uint64_t {0};
    info->ep_attr->tx_ctx_cnt = 1;
    info->ep_attr->rx_ctx_cnt = 1;

    info->tx_attr->caps = provider_caps;
    info->tx_attr->op_flags = FI_COMPLETION;
    info->tx_attr->msg_order = provider_msg_order;
    info->tx_attr->comp_order = FI_ORDER_NONE;
    info->tx_attr->inject_size = provider_inject_size;
    info->tx_attr->size = provider_tx_size;
    info->tx_attr->iov_limit = provider_iov_limit;
    info->tx_attr->rma_iov_limit = 1;

    info->rx_attr->caps = provider_caps;
    info->rx_attr->op_flags = FI_COMPLETION;
    info->rx_attr->msg_order = provider_msg_order;
    info->rx_attr->comp_order = FI_ORDER_NONE;
    info->rx_attr->total_buffered_recv = 0;
    info->rx_attr->size = provider_rx_size;
    info->rx_attr->iov_limit = provider_iov_limit;

    info->domain_attr->name = strdup("hashi0");
    info->domain_attr->threading = FI_THREAD_DOMAIN;
    info->domain_attr->control_progress = FI_PROGRESS_MANUAL;
    info->domain_attr->data_progress = FI_PROGRESS_MANUAL;
    info->domain_attr->resource_mgmt = FI_RM_ENABLED;
    info->domain_attr->av_type = FI_AV_TABLE;
    info->domain_attr->mr_mode = 0;
    info->domain_attr->mr_key_size = 8;
    info->domain_attr->cq_data_size = 8;
    info->domain_attr->cq_cnt = 64;
    info->domain_attr->ep_cnt = 64;
    info->domain_attr->tx_ctx_cnt = 64;
    info->domain_attr->rx_ctx_cnt = 64;
    info->domain_attr->max_ep_tx_ctx = 1;
    info->domain_attr->max_ep_rx_ctx = 1;
    info->domain_attr->max_ep_stx_ctx = 0;
    info->domain_attr->max_ep_srx_ctx = 0;
    info->domain_attr->cntr_cnt = 64;
    info->domain_attr->mr_iov_limit = 1;
    info->domain_attr->mr_cnt = 1 << 16;
    info->domain_attr->caps = FI_LOCAL_COMM | FI_REMOTE_COMM;
    info->domain_attr->mode = 0;

    info->fabric_attr->name = strdup(provider_name);
    info->fabric_attr->prov_name = nullptr; // the core fills it in
    info->fabric_attr->prov_version = provider_version;
    info->fabric_attr->api_version = api_version;

    if (info->domain_attr->name == nullptr || info->fabric_attr->name == nullptr) {
        fi_freeinfo(info);
        return nullptr;
    }
    if (hints == nullptr)
        return info;

    // Answer with what was asked for where we can honour it.
    if (hints->caps != 0) {
        info->caps = hints->caps & provider_caps;
        // Secondary capabilities we support without being asked for them.
        info->caps |= provider_caps & (FI_LOCAL_COMM | FI_REMOTE_COMM);
    }
    if (hints->tx_attr != nullptr) {
        // Echo the operation flags: FI_DELIVERY_COMPLETE, FI_TRANSMIT_COMPLETE
        // and FI_INJECT_COMPLETE are all met (a send completes when its bytes
        // are in the kernel, an RMA write only after the target has them).
        if (hints->tx_attr->op_flags != 0)
            info->tx_attr->op_flags = hints->tx_attr->op_flags;
        if (hints->tx_attr->msg_order != 0)
            info->tx_attr->msg_order = hints->tx_attr->msg_order & provider_msg_order;
    }
    if (hints->rx_attr != nullptr) {
        if (hints->rx_attr->op_flags != 0)
            info->rx_attr->op_flags = hints->rx_attr->op_flags;
        if (hints->rx_attr->msg_order != 0)
            info->rx_attr->msg_order = hints->rx_attr->msg_order & provider_msg_order;
    }
    if (hints->domain_attr != nullptr) {
        if (hints->domain_attr->threading != FI_THREAD_UNSPEC)
            info->domain_attr->threading = hints->domain_attr->threading;
        if (hints->domain_attr->av_type != FI_AV_UNSPEC)
            info->domain_attr->av_type = hints->domain_attr->av_type;
    }
    info->tx_attr->caps = info->caps;
    info->rx_attr->caps = info->caps;
    return info;
}

// Why hints cannot be met; nullptr when they can. Each reason is what
// FI_LOG_LEVEL=info shows, so a user can see why hashi was not chosen.
const char* reject_reason(const fi_info* hints)
{
    if (hints == nullptr)
        return nullptr;
    if ((hints->caps & ~provider_caps) != 0)
        return "capabilities asked for that hashi does not offer (e.g. FI_ATOMIC)";
    if (hints->ep_attr != nullptr && hints->ep_attr->type != FI_EP_UNSPEC && hints->ep_attr->type != FI_EP_RDM)
        return "hashi offers reliable-datagram (FI_EP_RDM) endpoints only";
    if (hints->addr_format != FI_FORMAT_UNSPEC)
        return "hashi addresses are FI_FORMAT_UNSPEC";
    if (hints->fabric_attr != nullptr) {
        if (hints->fabric_attr->prov_name != nullptr && std::strcmp(hints->fabric_attr->prov_name, provider_name) != 0)
            return "another provider was named";
        if (hints->fabric_attr->name != nullptr && std::strcmp(hints->fabric_attr->name, provider_name) != 0)
            return "another fabric was named";
    }
    if (hints->domain_attr != nullptr) {
        const auto* d = hints->domain_attr;
        if (d->name != nullptr && std::strcmp(d->name, "hashi0") != 0)
            return "another domain was named";
        // mr_mode bits in hints say what the application can cope with; we
        // require none of them (keys are the caller's, addresses are offsets
        // from the region's start), so any set is fine. The old FI_MR_BASIC
        // asks for provider keys and virtual addresses, which we do not do.
        if (d->mr_mode == FI_MR_BASIC)
            return "FI_MR_BASIC (provider keys, virtual addresses) asked for; hashi uses mr_mode 0";
        if (d->cq_data_size > 8)
            return "more than 8 bytes of remote CQ data";
        if (d->av_type != FI_AV_UNSPEC && d->av_type != FI_AV_TABLE && d->av_type != FI_AV_MAP)
            return "unknown AV type";
    }
    if (hints->tx_attr != nullptr) {
        if ((hints->tx_attr->msg_order & ~provider_msg_order) != 0)
            return "a message order asked for that hashi does not guarantee (atomic orders)";
        if (hints->tx_attr->inject_size > provider_inject_size)
            return "inject size larger than 4096";
        if (hints->tx_attr->iov_limit > provider_iov_limit)
            return "iov limit larger than 8";
    }
    if (hints->rx_attr != nullptr) {
        if ((hints->rx_attr->msg_order & ~provider_msg_order) != 0)
            return "a receive order asked for that hashi does not guarantee";
        if (hints->rx_attr->total_buffered_recv != 0)
            return "buffered receives are not offered";
    }
    if (hints->ep_attr != nullptr) {
        if (hints->ep_attr->tx_ctx_cnt > 1 || hints->ep_attr->rx_ctx_cnt > 1)
            return "scalable endpoints are not offered";
        if (hints->ep_attr->max_msg_size > (SIZE_MAX >> 1))
            return "max_msg_size too large";
    }
    return nullptr;
}

} // namespace

int getinfo(std::uint32_t /*version*/, const char* node, const char* service, std::uint64_t flags, const fi_info* hints,
    fi_info** out)
{
    return guarded([&]() -> int {
        *out = nullptr;
        // Naming a node or service (fi_getinfo(..., "host", "port", FI_SOURCE))
        // is for connection-oriented setups; RDM addresses come from
        // fi_getname after the endpoint is enabled.
        if ((node != nullptr || service != nullptr) && (flags & FI_SOURCE) == 0) {
            HASHI_DEBUG("getinfo: node/service given without FI_SOURCE; answering without it");
        }
        if (const char* why = reject_reason(hints)) {
            HASHI_DEBUG("getinfo: declined: %s", why);
            return -FI_ENODATA;
        }
        fi_info* info = make_info(hints);
        if (info == nullptr)
            return -FI_ENOMEM;
        *out = info;
        return 0;
    });
}

} // namespace hashi::fi
