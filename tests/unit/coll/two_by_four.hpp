// SPDX-License-Identifier: BSD-3-Clause
// The shape the selector tests model: 2 clusters x 4 nodes, one rank per
// node, as on the testbed runs their parameters come from.
#pragma once

#include "hierarchy.hpp"

namespace hashi::coll::test {

inline Hierarchy two_by_four()
{
    Hierarchy h;
    h.rank = 0;
    h.size = 8;
    h.nclusters = 2;
    h.cluster_of = {0, 0, 0, 0, 1, 1, 1, 1};
    derive_layout(h, {0, 1, 2, 3, 4, 5, 6, 7});
    return h;
}

} // namespace hashi::coll::test
