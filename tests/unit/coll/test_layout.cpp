// SPDX-License-Identifier: BSD-3-Clause
// The layout derived from cluster and node membership: members in rank
// order, lanes spread over nodes, uneven and non-contiguous clusters.
#include "hierarchy.hpp"

#include <boost/test/unit_test.hpp>
#include <vector>

using namespace hashi::coll;

namespace {
Hierarchy make(int rank, const std::vector<int>& cluster_of, const std::vector<int>& node_leader, int nclusters)
{
    Hierarchy h;
    h.rank = rank;
    h.size = static_cast<int>(cluster_of.size());
    h.nclusters = nclusters;
    h.cluster_of = cluster_of;
    derive_layout(h, node_leader);
    return h;
}
} // namespace

BOOST_AUTO_TEST_CASE(lanes_take_one_rank_per_node_first)
{
    // Cluster 0: ranks 0,1 on node A (leader 0), 2,3 on node B (leader 2).
    // Cluster 1: ranks 4,5,6 on node C (leader 4).
    const std::vector<int> cluster {0, 0, 0, 0, 1, 1, 1};
    const std::vector<int> leader {0, 0, 2, 2, 4, 4, 4};
    const Hierarchy h = make(3, cluster, leader, 2);
    BOOST_TEST(h.nnodes == 3);
    BOOST_TEST((h.members[0] == std::vector<int> {0, 1, 2, 3}));
    BOOST_TEST((h.members[1] == std::vector<int> {4, 5, 6}));
    BOOST_TEST((h.lanes[0] == std::vector<int> {0, 2, 1, 3}));
    BOOST_TEST((h.lanes[1] == std::vector<int> {4, 5, 6}));
    BOOST_TEST(h.my_cluster == 0);
    BOOST_TEST(h.cluster_rank == 3);
    BOOST_TEST(h.my_lane == 3);
    BOOST_TEST(h.min_cluster_size == 3);
    BOOST_TEST(h.max_cluster_size == 4);
    BOOST_TEST(h.lane_of[2] == 1);
    BOOST_TEST(h.index_in_cluster[5] == 1);
}

BOOST_AUTO_TEST_CASE(clusters_need_not_be_contiguous_in_the_communicator)
{
    // A split that interleaves three clusters of sizes 1, 2 and 3.
    const std::vector<int> cluster {2, 1, 2, 0, 1, 2};
    const std::vector<int> leader {0, 1, 2, 3, 4, 5}; // every rank its own node
    const Hierarchy h = make(4, cluster, leader, 3);
    BOOST_TEST((h.members[0] == std::vector<int> {3}));
    BOOST_TEST((h.members[1] == std::vector<int> {1, 4}));
    BOOST_TEST((h.members[2] == std::vector<int> {0, 2, 5}));
    BOOST_TEST(h.my_cluster == 1);
    BOOST_TEST(h.cluster_rank == 1);
    BOOST_TEST(h.min_cluster_size == 1);
    BOOST_TEST(h.nnodes == 6);
    for (int c = 0; c < 3; ++c)
        BOOST_TEST(h.lanes[c].size() == h.members[c].size());
}

BOOST_AUTO_TEST_CASE(a_single_rank_is_one_cluster_one_node_one_lane)
{
    const Hierarchy h = make(0, {0}, {0}, 1);
    BOOST_TEST(h.nnodes == 1);
    BOOST_TEST(h.lanes[0].size() == 1u);
    BOOST_TEST(h.my_lane == 0);
}
