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
    int lanes = 0; // the WAN senders per cluster it assumes; 0: the `lanes` asked for
};

struct CallShape {
    double bytes = 0; // see Call::bytes in selector.hpp
    int count = 0; // elements (reductions: to know count < pof2 etc.)
    bool user_op = false;
};

// Every candidate for `c` with its predicted time, in no particular order.
// `lanes`: the WAN senders per cluster the capped algorithms use. With
// `max_lanes` above it, the hierarchical alltoall(v) is also costed with
// 2, 4, ... times as many, up to `max_lanes`, and its best count is given
// in Estimate::lanes: its lanes pace to their share of the WAN, so more
// of them cost the WAN nothing, and fewer lanes carry a cluster's WAN
// bytes over fewer node links.
std::vector<Estimate> estimate(
    Collective c, const CallShape& call, const Hierarchy& h, const LinkParams& p, int lanes, int max_lanes = 0);

// The pipeline segment size that balances per-segment latency against
// pipeline fill for a message of `bytes` split over `lanes` lanes.
std::size_t segment_size(double bytes, int lanes, const LinkParams& p);

} // namespace hashi::coll
