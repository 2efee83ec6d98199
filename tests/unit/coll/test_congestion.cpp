// SPDX-License-Identifier: BSD-3-Clause
// The selection on a WAN whose bottleneck drops bursts: the start-up probe
// measures the share of segments a burst of one flow per lane loses
// (LinkParams::wan_burst_loss), and the cost model charges a collective
// that bursts more than k* unpaced senders into such a WAN the timeout of a
// lost tail. Parameters: what the probe measured on bench/wan's congested
// testbed (3 Dec 2026: 2 x 4 nodes at 1000 Mbit/s into a 100 Mbit/s WAN
// with a 128 KB uplink queue, 10 ms one way, load 7-9 on 2 cores: one
// flow 47-56 Mbit/s, so k* = 2; the burst of 4 flows lost 9-20 % of its
// segments, where the uncongested testbed's loses none).
#include "cost_model.hpp"
#include "link_params.hpp"
#include "selector.hpp"
#include "settings.hpp"
#include "two_by_four.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <string>

using namespace hashi::coll;

namespace {
using test::two_by_four;
LinkParams congested(double burst_loss)
{
    return LinkParams {.local_latency = 120e-6,
        .node_rate = 255e6 / 8,
        .node_exchange_rate = 70e6 / 8,
        .wan_latency = 11.1e-3,
        .wan_flow_rate = 50e6 / 8,
        .wan_rate = 100e6 / 8,
        .wan_burst_loss = burst_loss,
        .source = "3 Dec probe, congested testbed"};
}
double cost(Collective c, const std::string& algo, double bytes, const LinkParams& p)
{
    const int lanes = std::min(p.wan_senders(), 4);
    for (auto& x : estimate(c, CallShape {bytes, static_cast<int>(bytes / 8), false}, two_by_four(), p, lanes))
        if (x.algorithm == algo)
            return x.seconds;
    BOOST_FAIL("no estimate for " + algo);
    return 0;
}
std::string chosen(Collective c, double bytes, const LinkParams& p)
{
    set_settings(Settings {});
    set_link_params(p);
    const Hierarchy h = two_by_four(); // a fresh cache of choices
    return choose(h, Call {c, bytes, static_cast<int>(bytes / 8), true, false}).algorithm;
}
} // namespace

BOOST_AUTO_TEST_CASE(an_uncapped_burst_into_a_dropping_wan_costs_a_timeout)
{
    // MPICH's alltoall runs all 4 ranks of a cluster across the WAN at once
    // (k* = 2): with the probe's losses each of its bursts of 1 MiB per rank
    // is all but sure to lose a segment, so it is charged about one 200 ms
    // timeout more; the capped, paced algorithm is charged nothing.
    const double mib = 1 << 20;
    BOOST_TEST(congested(0.1).wan_senders() == 2);
    const double clean = cost(Collective::alltoall, "mpich", mib, congested(0));
    const double lossy = cost(Collective::alltoall, "mpich", mib, congested(0.1));
    BOOST_TEST(lossy - clean > 0.19);
    BOOST_TEST(lossy - clean <= 0.2 + 1e-9);
    BOOST_TEST(cost(Collective::alltoall, "hier", mib, congested(0.1)) ==
        cost(Collective::alltoall, "hier", mib, congested(0)));
    // Below kWanDropShare (0.1 %) the probe saw noise, not a dropping queue.
    BOOST_TEST(cost(Collective::alltoall, "mpich", mib, congested(0.0005)) == clean);
}

BOOST_AUTO_TEST_CASE(the_probes_drops_move_small_alltoalls_and_allgathers_to_the_capped_algorithms)
{
    // Without losses MPICH's Bruck alltoall and recursive-doubling allgather
    // win for small blocks (fewer WAN latencies than ours); once the probe
    // saw the WAN drop bursts, their uncapped bursts lose to hier's k*
    // paced lanes.
    for (double bytes : {4096.0}) {
        BOOST_TEST(chosen(Collective::alltoall, bytes, congested(0)) == "mpich", bytes);
        BOOST_TEST(chosen(Collective::alltoall, bytes, congested(0.1)) == "hier", bytes);
    }
    for (double bytes : {1024.0, 4096.0}) {
        BOOST_TEST(chosen(Collective::allgather, bytes, congested(0)) == "mpich", bytes);
        BOOST_TEST(chosen(Collective::allgather, bytes, congested(0.1)) == "hier", bytes);
        BOOST_TEST(chosen(Collective::allgatherv, bytes, congested(0.1)) == "hier", bytes);
    }
    // Large ones were ours already and stay so.
    BOOST_TEST(chosen(Collective::alltoall, 1 << 20, congested(0.1)) == "hier");
    BOOST_TEST(chosen(Collective::allgather, 1 << 20, congested(0.1)) == "hier");
}
