// SPDX-License-Identifier: BSD-3-Clause
// Memory regions. With mr_mode 0 there is nothing to pin: a region is a
// (base, length, access) triple under a key the application chose, and the
// target checks every remote access against it. Remote addresses are offsets
// from the base, so MPICH's dynamic windows register (NULL, UINTPTR_MAX) and
// send absolute addresses as offsets.
#include "transport/domain_gate.hpp"
#include "transport/objects.hpp"

#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

namespace hashi::fi {

namespace {

int mr_close(fid* f)
{
    auto* mr = owner_of<mr_obj>(reinterpret_cast<fid_mr*>(f));
    mr->domain->regions.erase(mr->key);
    mr->domain->refs--;
    delete mr;
    return 0;
}

fi_ops mr_fid_ops = {
    .size = sizeof(fi_ops),
    .close = gated<mr_close>,
    .bind = no_bind,
    .control = no_control,
    .ops_open = no_ops_open,
    .tostr = no_tostr,
    .ops_set = no_ops_set,
};

int mr_reg(fid* f, const void* buf, std::size_t len, std::uint64_t access, std::uint64_t /*offset*/,
    std::uint64_t requested_key, std::uint64_t flags, fid_mr** out, void* context)
{
    return guarded([&]() -> int {
        if (f->fclass != FI_CLASS_DOMAIN)
            return -FI_EINVAL;
        auto* dom = owner_of<domain_obj>(reinterpret_cast<fid_domain*>(f));
        // Remote-access events on a region need support we do not have.
        if ((flags & FI_RMA_EVENT) != 0)
            return -FI_EBADFLAGS;
        if (dom->regions.contains(requested_key))
            return -FI_ENOKEY;
        auto* mr = new mr_obj;
        mr->box.owner = mr;
        mr->domain = dom;
        mr->base = static_cast<std::uint8_t*>(const_cast<void*>(buf));
        mr->length = len;
        mr->access = access;
        mr->key = requested_key;
        mr->box.fid.fid.fclass = FI_CLASS_MR;
        mr->box.fid.fid.context = context;
        mr->box.fid.fid.ops = &mr_fid_ops;
        mr->box.fid.mem_desc = nullptr;
        mr->box.fid.key = requested_key;
        dom->regions.emplace(requested_key, mr);
        dom->refs++;
        *out = &mr->box.fid;
        return 0;
    });
}

int mr_regv(fid* f, const iovec* iov, std::size_t count, std::uint64_t access, std::uint64_t offset,
    std::uint64_t requested_key, std::uint64_t flags, fid_mr** out, void* context)
{
    // One contiguous region per key (mr_iov_limit is 1).
    if (count != 1)
        return -FI_EINVAL;
    return mr_reg(f, iov[0].iov_base, iov[0].iov_len, access, offset, requested_key, flags, out, context);
}

int mr_regattr(fid* f, const fi_mr_attr* attr, std::uint64_t flags, fid_mr** out)
{
    if (attr == nullptr || attr->iov_count != 1)
        return -FI_EINVAL;
    return mr_reg(f, attr->mr_iov[0].iov_base, attr->mr_iov[0].iov_len, attr->access, attr->offset, attr->requested_key,
        flags, out, attr->context);
}

} // namespace

fi_ops_mr mr_ops = {
    .size = sizeof(fi_ops_mr),
    .reg = gated<mr_reg>,
    .regv = gated<mr_regv>,
    .regattr = gated<mr_regattr>,
};

} // namespace hashi::fi
