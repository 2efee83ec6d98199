// SPDX-License-Identifier: BSD-3-Clause
// The measured (or configured) parameters of the links a job runs on, per
// level: what the cost model (cost_model.cpp) needs to compare algorithms.
#pragma once

#include "hierarchy.hpp"

#include <string>

namespace hashi::coll {

struct LinkParams {
    double local_latency = 50e-6; // s: one small message between two nodes of a cluster (alpha_l)
    double node_rate = 12.5e6; // bytes/s: one node's link (B_n = 1/beta_l)
    // bytes/s per direction when two nodes of a cluster send to each other
    // at once, as MPICH's recursive halving and doubling and pairwise
    // exchanges do (0: as node_rate). Measured on the testbed at about 0.5
    // to 0.65 of node_rate: each node's outgoing queue holds the ACKs of
    // the incoming flow behind its own data.
    double node_exchange_rate = 0;
    double wan_latency = 5e-3; // s: one-way latency between clusters (L_w)
    double wan_flow_rate = 12.5e6; // bytes/s: one flow over the WAN (min(B_n, W/RTT))
    double wan_rate = 125e6; // bytes/s: the WAN bottleneck per direction (B_w)
    double reduce_rate = 1e9; // bytes/s reduced by one core (1/gamma)
    // The share of its segments TCP retransmitted when one flow per lane
    // crossed the WAN at once in the probe (0: none seen or not measured;
    // negative: the probe could not read its sockets). Above
    // kWanDropShare the bottleneck drops what a cluster bursts into it.
    double wan_burst_loss = 0;
    std::string source = "built-in defaults";

    // k* = B_w / one flow's rate, rounded: more concurrent WAN senders
    // than this overflow the bottleneck.
    int wan_senders() const;
    // Aggregate WAN rate of k concurrent flows, each paced to its share
    // when k exceeds k* (unpaced flows past k* lose to congestion: `paced`
    // false models that with half the bottleneck rate).
    double wan_rate_of(int k, bool paced = true) const;
    // The per-direction rate of a two-way exchange between two nodes (B_x).
    double exchange_rate() const;
    // The probe saw the WAN bottleneck drop a burst of concurrent flows.
    bool wan_drops() const;
};

// 0.1 % of the burst's segments: on the uncongested testbed the probe's
// burst retransmits none; a 128 KB queue behind 4 senders loses more.
constexpr double kWanDropShare = 0.001;

// The parameters in force for this job (set at MPI_Init).
const LinkParams& link_params();
void set_link_params(const LinkParams& p);

// Reads KEY=VALUE lines (local_latency_us, node_rate_mbit,
// node_exchange_rate_mbit, wan_latency_ms, wan_flow_rate_mbit,
// wan_rate_mbit, reduce_rate_mbyte, wan_burst_loss_percent; '#' comments).
// Keys not given keep `base`'s values. Throws std::runtime_error with the
// file, line and what is wrong.
LinkParams read_link_params(const std::string& path, LinkParams base);
// Writes them in the same format.
void write_link_params(const std::string& path, const LinkParams& p);

// Measures the parameters with a short probe over `world` (collective;
// about a second on a 10 ms WAN). Needs at least two clusters;
// returns `base` unchanged otherwise. The result is the same on every rank.
LinkParams probe_link_params(const Hierarchy& world, LinkParams base);

} // namespace hashi::coll
