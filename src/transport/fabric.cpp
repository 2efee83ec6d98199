// SPDX-License-Identifier: BSD-3-Clause
// The fabric object: the root of everything the provider opens. It holds no
// state besides a count of its domains and event queues.
#include "transport/objects.hpp"

#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include <cstring>

namespace hashi::fi {

namespace {

int fabric_close(fid* f)
{
    auto* fab = owner_of<fabric_obj>(reinterpret_cast<fid_fabric*>(f));
    if (fab->refs > 0)
        return -FI_EBUSY;
    delete fab;
    return 0;
}

fi_ops fabric_fid_ops = {
    .size = sizeof(fi_ops),
    .close = fabric_close,
    .bind = no_bind,
    .control = no_control,
    .ops_open = no_ops_open,
    .tostr = no_tostr,
    .ops_set = no_ops_set,
};

int no_passive_ep(fid_fabric*, fi_info*, fid_pep**, void*)
{
    return -FI_ENOSYS;
}
int no_wait_open(fid_fabric*, fi_wait_attr*, fid_wait**)
{
    return -FI_ENOSYS;
}
int no_trywait(fid_fabric*, fid**, int)
{
    return -FI_ENOSYS;
}
int domain2(fid_fabric* fabric, fi_info* info, fid_domain** dom, std::uint64_t flags, void* context)
{
    if (flags != 0)
        return -FI_EBADFLAGS;
    return domain_open(fabric, info, dom, context);
}

fi_ops_fabric fabric_ops = {
    .size = sizeof(fi_ops_fabric),
    .domain = domain_open,
    .passive_ep = no_passive_ep,
    .eq_open = eq_open,
    .wait_open = no_wait_open,
    .trywait = no_trywait,
    .domain2 = domain2,
};

} // namespace

int no_bind(fid*, fid*, std::uint64_t)
{
    return -FI_ENOSYS;
}
int no_control(fid*, int, void*)
{
    return -FI_ENOSYS;
}
int no_ops_open(fid*, const char*, std::uint64_t, void**, void*)
{
    return -FI_ENOSYS;
}
int no_tostr(const fid*, char*, std::size_t)
{
    return -FI_ENOSYS;
}
int no_ops_set(fid*, const char*, std::uint64_t, void*, void*)
{
    return -FI_ENOSYS;
}

int fabric_open(fi_fabric_attr* attr, fid_fabric** out, void* context)
{
    return guarded([&]() -> int {
        if (attr != nullptr && attr->name != nullptr && std::strcmp(attr->name, provider_name) != 0)
            return -FI_EINVAL;
        auto* fab = new fabric_obj;
        fab->box.owner = fab;
        fab->box.fid.fid.fclass = FI_CLASS_FABRIC;
        fab->box.fid.fid.context = context;
        fab->box.fid.fid.ops = &fabric_fid_ops;
        fab->box.fid.ops = &fabric_ops;
        *out = &fab->box.fid;
        return 0;
    });
}

} // namespace hashi::fi
