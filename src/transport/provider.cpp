// SPDX-License-Identifier: BSD-3-Clause
// The entry point libfabric looks up in libhashi-fi.so (the diagnostics are
// in diagnostics.cpp).
#include "transport/common.hpp"
#include "transport/info.hpp"
#include "transport/objects.hpp"

#include <rdma/providers/fi_prov.h>

namespace hashi::fi {

namespace {

int fabric_entry(fi_fabric_attr* attr, fid_fabric** fabric, void* context)
{
    return fabric_open(attr, fabric, context);
}

void cleanup()
{
}

fi_provider the_provider = {
    .version = provider_version,
    .fi_version = api_version,
    .context = {},
    .name = provider_name,
    .getinfo = getinfo,
    .fabric = fabric_entry,
    .cleanup = cleanup,
};

} // namespace

} // namespace hashi::fi

extern "C" FI_EXT_INI
{
    return &hashi::fi::the_provider;
}
