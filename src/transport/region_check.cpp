// SPDX-License-Identifier: BSD-3-Clause
// The one check of an RMA target (objects.hpp: check_region), in a file of
// its own, apart from mr.cpp's ops tables: the receive backend calls it for
// every RMA write, and a unit test that drives the backend
// (tests/unit/transport/test_backend_vectors.cpp) links it without the
// libfabric object tables.
#include "transport/objects.hpp"

#include <rdma/fi_errno.h>

namespace hashi::fi {

int check_region(const domain_obj& domain, std::uint64_t key, std::uint64_t access, std::uint64_t offset,
    std::uint64_t len, mr_obj*& region) noexcept
{
    auto r = domain.regions.find(key);
    if (r == domain.regions.end())
        return -FI_EKEYREJECTED;
    if ((r->second->access & access) == 0)
        return -FI_EACCES;
    if (offset > r->second->length || len > r->second->length - offset)
        return -FI_EINVAL;
    region = r->second;
    return 0;
}

} // namespace hashi::fi
