// SPDX-License-Identifier: BSD-3-Clause
#include "selector.hpp"

#include "cost_model.hpp"
#include "link_params.hpp"
#include "settings.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace hashi::coll {

namespace {

// The predicted time ours must beat MPICH's by (a fraction of it).
constexpr double kMargin = 0.9;


bool is_reduction(Collective c)
{
    c = blocking_form(c);
    return c == Collective::reduce || c == Collective::allreduce || c == Collective::reduce_scatter_block;
}

// `max_lanes` above `lanes`: the model may cost the hierarchical alltoall
// with more WAN senders (cost_model.hpp).
Hierarchy::Decision decide(const Hierarchy& h, const Call& call, int lanes, int max_lanes, std::string& reason)
{
    const std::string& forced = settings().forced[static_cast<std::size_t>(call.collective)];
    if (is_reduction(call.collective) && !call.commutative) {
        reason = "non-commutative op: MPICH keeps the rank order";
        return {"mpich"};
    }
    if (!forced.empty() && forced != "auto") {
        reason = "forced by HASHI_COLL_" + std::string(env_suffix_of(call.collective));
        return {forced};
    }
    if (call.collective == Collective::alltoall && h.nnodes == 1 && call.bytes / h.size >= kCmaMinBlock) {
        reason = "one node, blocks of 32 KiB or more: single copy (MPICH 4.0.2's shared memory makes two)";
        return {"cma"};
    }
    if (h.nclusters == 1) {
        reason = "one cluster: MPICH's node-aware algorithms fit";
        return {"mpich"};
    }
    CallShape shape {call.bytes, call.count, call.user_op};
    auto est = estimate(call.collective, shape, h, link_params(), lanes, max_lanes);
    std::sort(est.begin(), est.end(), [](const Estimate& a, const Estimate& b) { return a.seconds < b.seconds; });
    std::ostringstream why;
    why << "cost model:";
    for (std::size_t i = 0; i < est.size(); ++i)
        why << (i ? " <" : "") << " " << est[i].algorithm << " " << std::lround(est[i].seconds * 1e6) << " us"
            << (est[i].lanes > 0 ? " with " + std::to_string(est[i].lanes) + " WAN senders" : std::string());
    reason = why.str();
    // Ours must promise a clear gain: MPICH's algorithms are the mature
    // ones, and the model cannot see every implementation cost.
    const auto mpich = std::find_if(est.begin(), est.end(), [](const Estimate& e) { return e.algorithm == "mpich"; });
    if (est.front().algorithm != "mpich" && mpich != est.end() && est.front().seconds > kMargin * mpich->seconds) {
        reason += "; within " + std::to_string(std::lround((1 - kMargin) * 100)) + "% of MPICH's: MPICH";
        return {"mpich"};
    }
    return {std::string(est.front().algorithm), est.front().lanes};
}

} // namespace

Choice choose(const Hierarchy& h, const Call& call)
{
    const Settings& s = settings();
    Choice choice;
    choice.tuning.wan_senders = s.wan_senders > 0 ? s.wan_senders : link_params().wan_senders();
    int lanes = std::max(1, std::min(choice.tuning.wan_senders, h.min_cluster_size));
    // The model may give an algorithm more senders than k* (cost_model.hpp),
    // unless the user fixed them (HASHI_COLL_WAN_SENDERS).
    const int max_lanes = s.wan_senders > 0 ? lanes : h.min_cluster_size;
    choice.tuning.segment_bytes =
        s.segment_bytes > 0 ? s.segment_bytes : segment_size(call.bytes, lanes, link_params());
    choice.tuning.wan_latency = link_params().wan_latency;

    // Size classes of powers of two: the choice is made once per class.
    const int bucket = call.bytes < 1 ? 0 : 1 + static_cast<int>(std::log2(call.bytes));
    const std::uint64_t key = static_cast<std::uint64_t>(call.collective) | static_cast<std::uint64_t>(bucket) << 8 |
        static_cast<std::uint64_t>(call.commutative) << 16 | static_cast<std::uint64_t>(call.user_op) << 17 |
        static_cast<std::uint64_t>(call.count < h.size) << 18;
    auto it = h.choices.find(key);
    const bool fresh = it == h.choices.end();
    std::string reason;
    if (fresh)
        it = h.choices.emplace(key, decide(h, call, lanes, max_lanes, reason)).first;
    choice.algorithm = it->second.algorithm;
    if (it->second.lanes > 0) {
        lanes = it->second.lanes;
        choice.tuning.wan_senders = lanes;
    }
    if (s.verbose >= 2 || (s.verbose >= 1 && fresh)) {
        if (h.rank == 0) {
            if (!fresh)
                reason = "as chosen before for this size class";
            std::fprintf(stderr,
                "hashi-coll: %.*s on comm of %d ranks in %d clusters, %.0f bytes: %s (%s; %d WAN senders, "
                "segments of %zu bytes; link parameters: %s)\n",
                static_cast<int>(name_of(call.collective).size()), name_of(call.collective).data(), h.size, h.nclusters,
                call.bytes, choice.algorithm.c_str(), reason.c_str(), lanes, choice.tuning.segment_bytes,
                link_params().source.c_str());
        }
    }
    return choice;
}

} // namespace hashi::coll
