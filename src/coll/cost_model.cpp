// SPDX-License-Identifier: BSD-3-Clause
#include "cost_model.hpp"

#include <algorithm>
#include <cmath>

namespace hashi::coll {

namespace {

double log2ceil(int n)
{
    return n <= 1 ? 0 : std::ceil(std::log2(static_cast<double>(n)));
}
bool is_pof2(int n)
{
    return n > 0 && (n & (n - 1)) == 0;
}

// Model inputs in the brief's notation.
struct M {
    double P, S, q, L; // ranks, clusters, ranks of the largest cluster, lanes
    double al, Bn, Bx; // local latency, node rate, node rate each way in a pairwise exchange
    double Lw, B1, Bw; // WAN one-way latency, one flow's rate, bottleneck
    double g; // seconds per reduced byte
    const LinkParams* p;
    double R(double k, bool paced = true) const { return p->wan_rate_of(static_cast<int>(k), paced); }
    // `bytes` that k unpaced senders of a cluster burst into the WAN at
    // once: at the rate such a burst gets, plus the timeouts of the tails
    // it loses where the probe saw the bottleneck drop (tail_loss).
    double burst(double k, double bytes) const;
    double flow() const { return std::min(Bn, B1); } // a single flow that crosses the WAN
};

// Linux's minimum retransmission timeout (TCP_RTO_MIN): what a lost tail
// of a message costs, since no later segment's duplicate ACKs report it.
constexpr double kRtoMin = 0.2;
// A full segment's TCP payload on Ethernet with timestamps.
constexpr double kSegmentPayload = 1448;

// Where the probe saw the WAN bottleneck drop a burst of concurrent flows
// (LinkParams::wan_drops), a burst of more than k* senders loses segments
// at the share it measured; fast retransmit repairs a loss inside a flow,
// a lost tail waits for the timeout (Matsuda et al., Cluster 2005). The
// expected cost charged: the chance that the burst loses any segment, times
// one minimum timeout. Capped paced algorithms (k <= k*) pay nothing.
double tail_loss(const LinkParams& p, double senders, double bytes)
{
    if (!p.wan_drops() || senders <= p.wan_senders())
        return 0;
    const double segments = std::max(bytes / kSegmentPayload, 1.0);
    return (1 - std::pow(1 - std::min(p.wan_burst_loss, 1.0), segments)) * kRtoMin;
}

double M::burst(double k, double bytes) const
{
    return bytes / R(k, false) + tail_loss(*p, k, bytes);
}

// ---- building blocks inside one cluster of q ranks ----------------------
double bcast_local(const M& m, double n)
{
    if (m.q <= 1)
        return 0;
    if (n <= 12288)
        return log2ceil(static_cast<int>(m.q)) * (m.al + n / m.Bn);
    return (log2ceil(static_cast<int>(m.q)) + m.q - 1) * m.al + 2 * (m.q - 1) / m.q * n / m.Bn;
}
double reduce_local(const M& m, double n)
{
    if (m.q <= 1)
        return 0;
    if (n <= 2048)
        return log2ceil(static_cast<int>(m.q)) * (m.al + n / m.Bn + n * m.g);
    return 2 * log2ceil(static_cast<int>(m.q)) * m.al + 2 * (m.q - 1) / m.q * n / m.Bn + n * m.g;
}
double allgather_local(const M& m, double n)
{
    return m.q <= 1 ? 0 : (m.q - 1) * (m.al + n / m.q / m.Bn);
}

// ---- MPICH's defaults, flat over all ranks (generic.json selection) -----
// Where MPICH's algorithm has pairs of ranks send to each other at once
// (recursive halving and doubling, pairwise and scattered exchanges), a
// node link carries data both ways and runs at the exchange rate Bx the
// probe measures, not at Bn: on the testbed Bx was 0.5-0.65 Bn (3 Dec),
// and with Bn there MPICH's measured times at 32 MiB were 1.3-1.9x the
// model's, so the selector kept MPICH's iallreduce where ours was 1.32x
// faster. Rings and trees send one way per link and keep Bn.
double mpich_bcast(const M& m, double n)
{
    const int P = static_cast<int>(m.P);
    if (P < 8 || n <= 12288) // binomial: log P rounds of n, one of them across the WAN
        return log2ceil(P) * (m.al + n / m.Bn) + m.Lw + n / m.flow() - n / m.Bn;
    const double scatter = log2ceil(P) * m.al + (m.P - 1) / m.P * n / m.Bn + m.Lw;
    if (is_pof2(P) && n <= 524288) // recursive doubling: the last round crosses with q pairs of n/2
        return scatter + log2ceil(P) * m.al + (m.P - 1) / m.P * n / m.Bx + m.Lw + m.burst(m.q, m.q * n / 2);
    // ring: every one of the P-1 steps waits for the slowest (WAN) edge
    return scatter + (m.P - 1) * (m.Lw + n / m.P / m.flow());
}
double mpich_allreduce(const M& m, double n, int count, bool user_op)
{
    const int P = static_cast<int>(m.P);
    int pof2 = 1;
    while (pof2 * 2 <= P)
        pof2 *= 2;
    if (n <= 8 || user_op || count < pof2) // recursive doubling
        return log2ceil(P) * (m.al + n / m.Bx + n * m.g) + m.Lw + m.burst(m.q, m.q * n);
    // Rabenseifner: the last halving and first doubling steps cross
    return 2 * log2ceil(P) * m.al + 2 * (m.P - 1) / m.P * n / m.Bx + n * m.g + 2 * (m.Lw + m.burst(m.q, n / 2));
}
double mpich_reduce(const M& m, double n)
{
    const int P = static_cast<int>(m.P);
    if (n <= 2048)
        return log2ceil(P) * (m.al + n / m.Bn + n * m.g) + m.Lw;
    // reduce-scatter by exchanges, then a gather one way
    return 2 * log2ceil(P) * m.al + (m.P - 1) / m.P * n * (1 / m.Bx + 1 / m.Bn) + n * m.g + 2 * m.Lw +
        m.burst(m.q, n / 2);
}
double mpich_allgather(const M& m, double n) // n: the whole result
{
    const int P = static_cast<int>(m.P);
    if (is_pof2(P) && n < 524288)
        return log2ceil(P) * m.al + (m.P - 1) / m.P * n / m.Bx + m.Lw + m.burst(m.q, m.q * n / 2);
    if (!is_pof2(P) && n < 81920)
        return log2ceil(P) * (m.Lw + n / 2 / m.Bn);
    return (m.P - 1) * (m.Lw + n / m.P / m.flow());
}
double mpich_alltoall(const M& m, double per_pair)
{
    const int P = static_cast<int>(m.P);
    if (per_pair <= 256 && P >= 8) // Bruck
        return log2ceil(P) * (m.Lw + (m.P / 2) * per_pair / m.Bn);
    const double cross = m.burst(m.q, m.q * m.q * per_pair * (m.S - 1));
    if (per_pair <= 32768) // scattered, 32 at a time
        return std::ceil((m.P - 1) / 32) * m.Lw + cross + (m.P - 1) * per_pair / m.Bx;
    return m.q * (m.S - 1) * m.Lw + cross + (m.P - 1) * (m.al + per_pair / m.Bx); // pairwise
}
// A barrier costs the time from the last arrival to the last release plus
// the spread of the releases it leaves: a rank let go early waits that
// much longer inside the next collective for the ones let go late (a 4 KiB
// bcast timed between barriers, the way OSU's osu_bcast does, read twice
// the WAN latency on the late cluster when our barrier released its
// clusters a WAN latency apart). The spreads are those measured by
// bench/coll/run-barrier-skew after a rooted collective, when one cluster
// arrives a WAN latency after the other.
double mpich_barrier(const M& m)
{
    // Flat dissemination: on 2 x 4 ranks at 10 ms, the first rank left 0.1
    // ms after the last arrival, the last 31 ms after: log2 P rounds with
    // pairs across the WAN, and as much spread.
    const double rounds = log2ceil(static_cast<int>(m.P));
    return rounds * (m.Lw + m.al) + rounds * m.Lw;
}
double hier_barrier(const M& m)
{
    // Up and down two trees in each cluster, ceil(log2 S) dissemination
    // rounds between the cluster leaders. Each leader holds its release to
    // one WAN latency after its cluster was complete
    // (algorithms/barrier_hier.cpp), which evens out two clusters; with
    // more, the news of a late cluster reaches the others after 1 to
    // ceil(log2 S) rounds. In a cluster the release tree's depth spreads it.
    const double local = log2ceil(static_cast<int>(m.q)) * m.al;
    const double rounds = log2ceil(static_cast<int>(m.S));
    const double spread = std::max(rounds - 1, 0.0) * m.Lw + local;
    return 4 * local + rounds * m.Lw + spread;
}

} // namespace

std::size_t segment_size(double bytes, int lanes, const LinkParams& p)
{
    // G ~ sqrt(bandwidth time outside the slowest stage / per-segment
    // latency), with three stages (local, WAN, local) of similar volume.
    // The segments stream over open connections, so the WAN latency is paid
    // once per pipeline, not per segment: only the local hops' latencies
    // count per segment. (Measured on the testbed, 2 x 4 nodes at 100
    // Mbit/s and 10 ms: a 32 MiB bcast took 1.6 s longer with 1 MiB
    // segments, which charging the WAN latency per segment gave, than with
    // 32-128 KiB ones.)
    const double per_lane = bytes / std::max(lanes, 1);
    const double stage = per_lane / p.node_rate;
    const double alpha = 2 * p.local_latency;
    double g = std::sqrt(std::max(2 * stage, 0.0) / std::max(alpha, 1e-9));
    g = std::clamp(g, 1.0, 4096.0);
    const double seg = std::clamp(per_lane / g, 32.0 * 1024, 1024.0 * 1024);
    return static_cast<std::size_t>(seg);
}

std::vector<Estimate> estimate(
    Collective c, const CallShape& call, const Hierarchy& h, const LinkParams& p, int lanes, int max_lanes)
{
    M m {static_cast<double>(h.size), static_cast<double>(h.nclusters), static_cast<double>(h.max_cluster_size),
        static_cast<double>(std::max(lanes, 1)), p.local_latency, p.node_rate, p.exchange_rate(), p.wan_latency,
        p.wan_flow_rate,
        p.wan_rate, 1 / p.reduce_rate, &p};
    const double n = call.bytes, S = m.S, q = m.q, L = m.L;
    // Pipelined schedules: the busiest NIC's bytes, once, plus the fill of
    // a few segments and the latencies of the stages.
    const double seg = static_cast<double>(segment_size(n, lanes, p));
    // A segment passes three stages (to its lane, over the WAN, to the
    // cluster's other ranks, one message each), so the pipeline costs the
    // latency of each stage once and the fill of three segments.
    const double fill = 3 * std::min(seg, n / L) / m.Bn + (q + 1) * m.al + m.Lw;
    std::vector<Estimate> e;
    switch (c) {
    case Collective::bcast: {
        e.push_back({"mpich", mpich_bcast(m, n)});
        e.push_back({"leader", m.Lw + (S - 1) * n / m.flow() + bcast_local(m, n)});
        // Every NIC carries about n once: the root sends each piece once,
        // lanes forward theirs locally and over the WAN.
        e.push_back({"matsuda", std::max(n / m.Bn, (S - 1) * n / m.R(L)) + fill});
        break;
    }
    case Collective::allreduce: {
        e.push_back({"mpich", mpich_allreduce(m, n, call.count, call.user_op)});
        e.push_back({"leader",
            reduce_local(m, n) + 2 * m.Lw * log2ceil(static_cast<int>(S)) + n / m.flow() + bcast_local(m, n)});
        const double rs_ag = 2 * (q - 1) * (m.al + n / q / m.Bn) + n * m.g;
        e.push_back({"matsuda",
            std::max((2 * (q - 1) + (S - 1)) / q * n / m.Bn, (S - 1) * n / m.R(L)) + n / q * m.g * S + fill});
        const double wan_piece = n / L;
        e.push_back({"lr_lr", rs_ag + 2 * (S - 1) * (m.Lw + wan_piece / S / m.flow())});
        e.push_back(
            {"lr_rab", rs_ag + 2 * log2ceil(static_cast<int>(S)) * m.Lw + 2 * (S - 1) / S * wan_piece / m.flow()});
        e.push_back(
            {"lr_lr_pipe", std::max(rs_ag, 2 * (S - 1) * wan_piece / S / m.flow()) + 2 * (S - 1) * m.Lw + fill});
        e.push_back({"ring", 2 * (m.P - 1) * (m.Lw + n / m.P / m.flow()) + n * m.g});
        break;
    }
    case Collective::reduce:
        e.push_back({"mpich", mpich_reduce(m, n)});
        e.push_back({"hier",
            (q - 1) * (m.al + n / q / m.Bn) + n * m.g + m.Lw + (S - 1) * n / m.R(L) +
                log2ceil(static_cast<int>(q)) * m.al + (q - 1) / q * n / m.Bn});
        break;
    case Collective::reduce_scatter_block:
        e.push_back({"mpich",
            log2ceil(static_cast<int>(m.P)) * (m.al + m.Lw) + (m.P - 1) / m.P * n / m.Bx + m.burst(m.q, n / 2) +
                n * m.g});
        e.push_back({"hier", (q - 1) * (m.al + n / q / m.Bn) + n * m.g + m.Lw + (S - 1) * n / S / m.R(L)});
        break;
    case Collective::allgather:
    case Collective::allgatherv:
        e.push_back({"mpich", mpich_allgather(m, n)});
        e.push_back({"hier",
            allgather_local(m, n / S) + (S - 1) * (m.Lw + (n / S) / m.R(L)) + allgather_local(m, n * (S - 1) / S)});
        break;
    case Collective::alltoall:
    case Collective::alltoallv: {
        const double per_pair = n / std::max(m.P, 1.0);
        e.push_back({"mpich", mpich_alltoall(m, per_pair)});
        // The single copy is for one node, where the selector picks it by
        // rule; on a communicator that spans nodes it hands the call to
        // MPICH after one exchange of addresses, so never cheaper.
        if (c == Collective::alltoall)
            e.push_back({"cma", mpich_alltoall(m, per_pair) + m.al});
        // Remote blocks leave from L lanes; ranks that are not lanes hand
        // theirs over first. Local pairs exchange directly meanwhile. The
        // cluster's WAN bytes leave through the lanes' node links, at most
        // L flows' worth: through relays with several trunks one striped
        // flow fills the WAN (so k* = 1), and one lane's link then carried
        // the whole cluster's WAN bytes and its hand-overs, at 0.74x the 8
        // trunks against 0.95x with 4 or 8 lanes (bench/relay/run-trunks).
        auto hier = [&](double lanes_now) {
            const double handover = q > lanes_now ? (q - lanes_now) / lanes_now * q * (S - 1) * per_pair / m.Bn : 0;
            const double wan = std::min(m.R(lanes_now), lanes_now * m.flow());
            return m.Lw + handover + q * q * per_pair * (S - 1) / wan + (q - 1) * (m.al + per_pair / m.Bx);
        };
        Estimate best {"hier", hier(L)};
        for (int more = 2 * static_cast<int>(L); max_lanes > L && more / 2 < max_lanes; more *= 2) {
            const int k = std::min(more, max_lanes);
            // A clear gain only: the fewer senders, the fewer flows to pace.
            if (const double t = hier(k); t < 0.9 * best.seconds)
                best = {"hier", t, k};
        }
        e.push_back(best);
        break;
    }
    case Collective::barrier:
        e.push_back({"mpich", mpich_barrier(m)});
        e.push_back({"hier", hier_barrier(m)});
        break;
    // The nonblocking algorithms (algorithms/i*_hier.cpp) against MPICH's
    // nonblocking ones, which pick the same shapes as its blocking ones.
    // One segment: binomial trees in the clusters, one WAN message per
    // cluster pair. Several: chains in the clusters, segments streaming
    // through the tree, the WAN and the tree again, each rank's link
    // carrying what the busiest rank moves.
    case Collective::ibcast: {
        e.push_back({"mpich", mpich_bcast(m, n)});
        const double tree = log2ceil(static_cast<int>(q)) * (m.al + n / m.Bn);
        const double chain_fill = 2 * q * (m.al + seg / m.Bn) + m.Lw;
        e.push_back({"hier",
            n <= seg ? m.Lw + (S - 1) * (m.al + n / m.flow()) + tree : std::max(n / m.Bn, n / m.flow()) + chain_fill});
        break;
    }
    case Collective::iallreduce: {
        e.push_back({"mpich", mpich_allreduce(m, n, call.count, call.user_op)});
        const double tree = log2ceil(static_cast<int>(q)) * (2 * m.al + 2 * n / m.Bn + n * m.g);
        const double chain_fill = 3 * q * (m.al + seg / m.Bn) + m.Lw;
        e.push_back({"hier",
            n <= seg ? tree + m.Lw + (S - 1) * n / m.flow() + S * n * m.g
                     : std::max(std::max(2.0, S) * n / m.Bn, n / m.flow()) + S * n * m.g + chain_fill});
        break;
    }
    case Collective::ireduce: {
        e.push_back({"mpich", mpich_reduce(m, n)});
        const double tree = log2ceil(static_cast<int>(q)) * (m.al + n / m.Bn + n * m.g);
        const double chain_fill = q * (m.al + seg / m.Bn) + m.Lw;
        e.push_back({"hier",
            n <= seg ? tree + m.Lw + (S - 1) * n / m.flow() + S * n * m.g
                     : std::max(S * n / m.Bn, n / m.flow()) + S * n * m.g + chain_fill});
        break;
    }
    case Collective::ibarrier:
        e.push_back({"mpich", mpich_barrier(m)});
        e.push_back({"hier", 2 * log2ceil(static_cast<int>(q)) * m.al + m.Lw + (S - 1) * m.al});
        break;
    }
    return e;
}

} // namespace hashi::coll
