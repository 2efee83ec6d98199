// SPDX-License-Identifier: BSD-3-Clause
// Route decisions (router.hpp).
#include "transport/engine/router.hpp"

#include "transport/engine/peer_table.hpp"

namespace hashi::fi {

bool router::crosses_wan(const peer& p) const noexcept
{
    return p.addr.cluster_id != self_.cluster_id;
}

route router::route_for(const peer& p) const noexcept
{
    route r;
    if (p.is_self) {
        r.how = route::kind::self;
        return r;
    }
    r.how = route::kind::direct;
    r.ipv4 = p.addr.ipv4;
    r.port = p.addr.port;
    r.wan = crosses_wan(p);
    return r;
}

path* router::path_for(const peer& p) const noexcept
{
    return p.paths.empty() ? nullptr : p.paths.front();
}

} // namespace hashi::fi
