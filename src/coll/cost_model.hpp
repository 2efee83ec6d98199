// SPDX-License-Identifier: BSD-3-Clause
// Alpha-beta cost models of every algorithm the selector can choose,
// MPICH's defaults included, per level (node link, WAN), following the
// formulas of the design brief (docs: shared research notes, part B.6).
// They need not be exact: they must rank the candidates right.
#pragma once

#include "collective.hpp"
#include "hierarchy.hpp"
#include "link_params.hpp"

#include <string_view>
#include <vector>

namespace hashi::coll {

struct Estimate {
    std::string_view algorithm; // "mpich" or one of algorithms_of(c)
    double seconds;
};

struct CallShape {
    double bytes = 0; // see Call::bytes in selector.hpp
    int count = 0; // elements (reductions: to know count < pof2 etc.)
    bool user_op = false;
};

// Every candidate for `c` with its predicted time, in no particular order.
std::vector<Estimate> estimate(Collective c, const CallShape& call, const Hierarchy& h, const LinkParams& p, int lanes);

// The pipeline segment size that balances per-segment latency against
// pipeline fill for a message of `bytes` split over `lanes` lanes.
std::size_t segment_size(double bytes, int lanes, const LinkParams& p);

} // namespace hashi::coll
