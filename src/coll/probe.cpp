// SPDX-License-Identifier: BSD-3-Clause
// The start-up probe: a few ping-pongs and timed transfers between lanes of
// the first two clusters, measuring what the cost model needs. It runs once
// per job, at MPI_Init, only when the job spans several clusters and no
// parameter file is given (HASHI_COLL_PARAMS); HASHI_COLL_PROBE=off skips
// it. Rank lanes[0][0] collects the figures and broadcasts them, so every
// rank selects from the same numbers and therefore picks the same
// algorithm.
#include "link_params.hpp"
#include "tcp_retransmits.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <vector>

namespace hashi::coll {

namespace {

constexpr int kTag = 0x4853; // on the world hierarchy's private communicator
// TCP payload of a full segment on Ethernet with timestamps (1500 - 52).
constexpr double kSegmentPayload = 1448;

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Round trips of `bytes` out and 1 byte back between a and b; returns the
// times seen at a (empty elsewhere).
std::vector<double> ping(const Hierarchy& h, int a, int b, int bytes, int rounds, std::vector<char>& buf)
{
    std::vector<double> times;
    if (h.rank != a && h.rank != b)
        return times;
    for (int i = 0; i < rounds; ++i) {
        if (h.rank == a) {
            const double t0 = PMPI_Wtime();
            PMPI_Send(buf.data(), bytes, MPI_BYTE, b, kTag, h.comm);
            PMPI_Recv(buf.data(), 1, MPI_BYTE, b, kTag, h.comm, MPI_STATUS_IGNORE);
            times.push_back(PMPI_Wtime() - t0);
        } else {
            PMPI_Recv(buf.data(), bytes, MPI_BYTE, a, kTag, h.comm, MPI_STATUS_IGNORE);
            PMPI_Send(buf.data(), 1, MPI_BYTE, a, kTag, h.comm);
        }
    }
    return times;
}

// `bytes` each way at once between a and b (MPI_Sendrecv), framed by a
// 1-byte start from a and a 1-byte end from b, so that b starts sending
// only after a's clock runs and a's clock stops only when b has all of a's
// data (a's send may complete into its socket buffer). Returns the time
// seen at a without the two small messages (0 elsewhere).
double exchange(const Hierarchy& h, int a, int b, int bytes, double latency)
{
    if (h.rank != a && h.rank != b)
        return 0;
    std::vector<char> out(bytes, 0), in(bytes);
    const int peer = h.rank == a ? b : a;
    const double t0 = PMPI_Wtime();
    if (h.rank == a)
        PMPI_Send(out.data(), 1, MPI_BYTE, b, kTag, h.comm);
    else
        PMPI_Recv(in.data(), 1, MPI_BYTE, a, kTag, h.comm, MPI_STATUS_IGNORE);
    PMPI_Sendrecv(out.data(), bytes, MPI_BYTE, peer, kTag, in.data(), bytes, MPI_BYTE, peer, kTag, h.comm,
        MPI_STATUS_IGNORE);
    if (h.rank == a)
        PMPI_Recv(in.data(), 1, MPI_BYTE, b, kTag, h.comm, MPI_STATUS_IGNORE);
    else
        PMPI_Send(out.data(), 1, MPI_BYTE, a, kTag, h.comm);
    return PMPI_Wtime() - t0 - 2 * latency;
}

} // namespace

LinkParams probe_link_params(const Hierarchy& h, LinkParams p)
{
    if (h.nclusters < 2)
        return p;
    const int a = h.lanes[0][0], b = h.lanes[1][0];
    // One flow per node: lanes beyond a cluster's node count would share a
    // NIC and make the WAN look saturated when the NIC is.
    auto nodes_of = [&](int c) {
        std::vector<int> nodes;
        for (int r : h.members[c])
            nodes.push_back(h.node_of[r]);
        std::sort(nodes.begin(), nodes.end());
        return static_cast<int>(std::unique(nodes.begin(), nodes.end()) - nodes.begin());
    };
    const int lanes = std::min({nodes_of(0), nodes_of(1), 8});
    constexpr int kBulk = 1 << 20;
    std::vector<char> buf(kBulk, 0);
    PMPI_Barrier(h.comm);

    // Inside a cluster: between the first two lanes (different nodes when
    // the cluster has several) of whichever of the two clusters has them.
    const int lc = h.cluster_size(0) >= 2 ? 0 : (h.cluster_size(1) >= 2 ? 1 : -1);
    double local_latency = p.local_latency, node_rate = p.node_rate, exchange_rate = p.node_exchange_rate;
    if (lc >= 0) {
        const int x = h.lanes[lc][0], y = h.lanes[lc][1];
        auto small = ping(h, x, y, 1, 20, buf);
        ping(h, x, y, kBulk, 1, buf); // warm-up: connection and TCP window
        auto bulk = ping(h, x, y, kBulk, 3, buf);
        if (h.rank == x) {
            local_latency = median(small) / 2;
            node_rate = kBulk / std::max(*std::min_element(bulk.begin(), bulk.end()) - 2 * local_latency, 1e-9);
        }
        // Both at once, as MPICH's pairwise exchanges send. 2 MiB: the
        // slowdown comes as the nodes' queues fill with data ahead of the
        // other flow's ACKs, which 1 MiB on the testbed sometimes missed.
        constexpr int kExchange = 2 << 20;
        const double both = exchange(h, x, y, kExchange, local_latency);
        if (h.rank == x)
            exchange_rate = kExchange / std::max(both, 1e-9);
        PMPI_Bcast(&local_latency, 1, MPI_DOUBLE, x, h.comm);
        PMPI_Bcast(&node_rate, 1, MPI_DOUBLE, x, h.comm);
        PMPI_Bcast(&exchange_rate, 1, MPI_DOUBLE, x, h.comm);
    }
    PMPI_Barrier(h.comm);

    // Across the WAN: latency, one flow, then `lanes` flows at once.
    auto small = ping(h, a, b, 1, 5, buf);
    double wan_latency = h.rank == a ? median(small) / 2 : 0;
    ping(h, a, b, kBulk, 1, buf);
    auto one = ping(h, a, b, kBulk, 2, buf);
    double flow_rate = 0;
    if (h.rank == a)
        flow_rate = kBulk / std::max(*std::min_element(one.begin(), one.end()) - 2 * wan_latency, 1e-9);
    PMPI_Bcast(&wan_latency, 1, MPI_DOUBLE, a, h.comm);
    PMPI_Barrier(h.comm);
    // One round opens the lanes' connections and grows their TCP windows
    // (only a and b have talked so far); the best of the next two counts.
    const bool sender = h.my_cluster == 0 && h.my_lane < lanes;
    const bool receiver = h.my_cluster == 1 && h.my_lane < lanes;
    // Whether the bottleneck drops such a burst: the segments the senders'
    // TCP retransmitted over the two counted rounds (the windows are open
    // by then, as after a compute phase with tcp_slow_start_after_idle=0).
    // A sender's round ends with its receiver's reply, so every loss of its
    // data has been repaired by then.
    double slowest = 0;
    std::optional<std::uint64_t> retrans_before;
    double retrans = 0; // this sender's, over rounds 1 and 2; -1: cannot tell
    for (int round = 0; round < 3; ++round) {
        if (sender && round == 1)
            retrans_before = process_tcp_retransmits();
        PMPI_Barrier(h.comm);
        double elapsed = 0;
        const double t0 = PMPI_Wtime();
        if (sender) {
            const int peer = h.lanes[1][h.my_lane];
            PMPI_Send(buf.data(), kBulk, MPI_BYTE, peer, kTag, h.comm);
            PMPI_Recv(buf.data(), 1, MPI_BYTE, peer, kTag, h.comm, MPI_STATUS_IGNORE);
            elapsed = PMPI_Wtime() - t0 - 2 * wan_latency;
        } else if (receiver) {
            const int peer = h.lanes[0][h.my_lane];
            PMPI_Recv(buf.data(), kBulk, MPI_BYTE, peer, kTag, h.comm, MPI_STATUS_IGNORE);
            PMPI_Send(buf.data(), 1, MPI_BYTE, peer, kTag, h.comm);
        }
        double this_round = 0;
        PMPI_Reduce(&elapsed, &this_round, 1, MPI_DOUBLE, MPI_MAX, a, h.comm);
        if (round == 1 || (round == 2 && this_round < slowest))
            slowest = this_round;
    }
    if (sender) {
        const auto after = process_tcp_retransmits();
        retrans = retrans_before && after ? static_cast<double>(*after - *retrans_before) : -1;
    }
    double retrans_sum = 0, retrans_min = 0;
    PMPI_Reduce(&retrans, &retrans_sum, 1, MPI_DOUBLE, MPI_SUM, a, h.comm);
    PMPI_Reduce(&retrans, &retrans_min, 1, MPI_DOUBLE, MPI_MIN, a, h.comm);

    // A core's reduction rate, for the gamma term.
    double reduce_rate = p.reduce_rate;
    if (h.rank == a) {
        std::vector<double> x(kBulk / sizeof(double), 1.0), y(x.size(), 2.0);
        const double t0 = PMPI_Wtime();
        PMPI_Reduce_local(x.data(), y.data(), static_cast<int>(x.size()), MPI_DOUBLE, MPI_SUM);
        reduce_rate = kBulk / std::max(PMPI_Wtime() - t0, 1e-9);
    }

    std::array<double, 8> out {local_latency, node_rate, wan_latency, flow_rate, 0, reduce_rate, exchange_rate, 0};
    if (h.rank == a) {
        const double aggregate = static_cast<double>(lanes) * kBulk / std::max(slowest, 1e-9);
        // If `lanes` flows got (nearly) `lanes` times one flow, the WAN did
        // not saturate: its rate is at least what we saw, and we cannot see
        // more without more nodes, so the cap stays at least `lanes`.
        // A busy CPU also slows flows down, which looks like a saturated WAN
        // to this test: below 70% of `lanes` flows' worth we take the
        // aggregate as the WAN's rate (and the cap rounds to the nearest).
        out[4] = aggregate >= 0.7 * lanes * flow_rate ? std::max(aggregate, lanes * flow_rate) : aggregate;
        // Retransmitted segments per segment sent (full-sized ones: the
        // share is an estimate either way); negative when a sender could
        // not read its sockets.
        const double segments = 2.0 * lanes * kBulk / kSegmentPayload;
        out[7] = retrans_min < 0 ? -1 : retrans_sum / segments;
    }
    PMPI_Bcast(out.data(), static_cast<int>(out.size()), MPI_DOUBLE, a, h.comm);
    p.local_latency = out[0];
    p.node_rate = out[1];
    p.wan_latency = out[2];
    p.wan_flow_rate = out[3];
    p.wan_rate = out[4];
    p.reduce_rate = out[5];
    p.node_exchange_rate = out[6];
    p.wan_burst_loss = out[7];
    p.source = "probe at start-up";
    return p;
}

} // namespace hashi::coll
