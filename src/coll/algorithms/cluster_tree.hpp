// SPDX-License-Identifier: BSD-3-Clause
// The trees the nonblocking collectives move data on inside one cluster:
// rooted at the cluster's entry (the rank that talks to other clusters),
// over the cluster's ranks ordered one node at a time (the entry's node
// first), either binomial (few rounds: for messages of one segment) or a
// chain (each rank passes a segment on to one next rank: for pipelines,
// where every node link then carries the data once each way).
#pragma once

#include "hierarchy.hpp"

#include <vector>

namespace hashi::coll::algo {

struct ClusterTree {
    std::vector<int> order; // comm ranks of the cluster, order[0] the entry
    int position = -1; // my index in order (-1: not in this cluster)
    int parent = -1; // comm rank, -1 at the entry
    std::vector<int> children; // comm ranks, in the order to serve them
};

// The tree of cluster `cluster` rooted at comm rank `entry` (a member of
// it), as seen by rank h.rank.
ClusterTree cluster_tree(const Hierarchy& h, int cluster, int entry, bool chain);

// The entry of a cluster that holds no root: its first lane.
inline int default_entry(const Hierarchy& h, int cluster)
{
    return h.lanes[cluster][0];
}

// Elements per segment for `count` elements of `type_size` bytes with
// segments of about `segment_bytes` (0: one segment).
int segment_elements(int count, int type_size, std::size_t segment_bytes);

} // namespace hashi::coll::algo
