// SPDX-License-Identifier: BSD-3-Clause
// The trees of the nonblocking collectives: every rank of a cluster is
// reached exactly once from the entry, parents and children agree, ranks
// come one node at a time with the entry's node first, and chains are
// chains.
#include "algorithms/cluster_tree.hpp"

#include <boost/test/unit_test.hpp>
#include <map>
#include <set>
#include <vector>

using namespace hashi::coll;
using namespace hashi::coll::algo;

namespace {
// Cluster 0: nodes {0,1,2}, {3,4}, {5}; cluster 1: nodes {6,7}, {8,9,10}.
const std::vector<int> kCluster {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1};
const std::vector<int> kLeader {0, 0, 0, 3, 3, 5, 6, 6, 8, 8, 8};

Hierarchy make(int rank)
{
    Hierarchy h;
    h.rank = rank;
    h.size = static_cast<int>(kCluster.size());
    h.nclusters = 2;
    h.cluster_of = kCluster;
    derive_layout(h, kLeader);
    return h;
}

// Every member's view of cluster c's tree rooted at `entry`.
std::map<int, ClusterTree> views(int c, int entry, bool chain)
{
    std::map<int, ClusterTree> v;
    for (int r = 0; r < static_cast<int>(kCluster.size()); ++r)
        if (kCluster[r] == c)
            v[r] = cluster_tree(make(r), c, entry, chain);
    return v;
}

void check_tree(const std::map<int, ClusterTree>& v, int entry)
{
    std::set<int> reached {entry};
    for (auto& [rank, t] : v) {
        BOOST_TEST(t.order == v.begin()->second.order); // all ranks see one order
        BOOST_TEST(t.order[t.position] == rank);
        BOOST_TEST((t.parent < 0) == (rank == entry));
        for (int child : t.children) {
            BOOST_TEST(v.at(child).parent == rank);
            BOOST_TEST(reached.insert(child).second); // reached once
        }
    }
    BOOST_TEST(reached.size() == v.size());
}
} // namespace

BOOST_AUTO_TEST_CASE(order_is_node_by_node_from_the_entry)
{
    const ClusterTree t = cluster_tree(make(4), 0, 4, true);
    BOOST_TEST((t.order == std::vector<int> {4, 3, 0, 1, 2, 5}));
    BOOST_TEST(t.position == 0);
    BOOST_TEST(t.parent == -1);
    BOOST_TEST((t.children == std::vector<int> {3}));
}

BOOST_AUTO_TEST_CASE(binomial_trees_reach_every_rank_once)
{
    for (int entry : {0, 4, 5})
        check_tree(views(0, entry, false), entry);
    for (int entry : {6, 10})
        check_tree(views(1, entry, false), entry);
    // Six ranks: the entry serves its largest subtree first (4, 2, 1).
    const auto v = views(0, 0, false);
    BOOST_TEST((v.at(0).children == std::vector<int> {4, 2, 1}));
}

BOOST_AUTO_TEST_CASE(chains_have_one_child_each)
{
    const auto v = views(1, 8, true);
    check_tree(v, 8);
    int leaves = 0;
    for (auto& [rank, t] : v) {
        BOOST_TEST(t.children.size() <= 1u);
        leaves += t.children.empty();
    }
    BOOST_TEST(leaves == 1);
}

BOOST_AUTO_TEST_CASE(segments_are_whole_elements)
{
    BOOST_TEST(segment_elements(0, 8, 4096) == 1);
    BOOST_TEST(segment_elements(1000, 8, 0) == 1000);
    BOOST_TEST(segment_elements(1000, 8, 4096) == 512);
    BOOST_TEST(segment_elements(1000, 8, 3) == 1); // smaller than an element
    BOOST_TEST(segment_elements(100, 8, 4096) == 100);
}
