// SPDX-License-Identifier: BSD-3-Clause
#include "cluster_tree.hpp"

#include <algorithm>
#include <map>

namespace hashi::coll::algo {

ClusterTree cluster_tree(const Hierarchy& h, int cluster, int entry, bool chain)
{
    ClusterTree t;
    // The entry, the rest of its node, then the other nodes in order, so a
    // chain crosses each node link once and a binomial tree's subtrees
    // mostly stay on their node.
    std::map<int, std::vector<int>> by_node;
    for (int r : h.members[cluster])
        if (r != entry)
            by_node[h.node_of[r]].push_back(r);
    t.order.push_back(entry);
    auto own = by_node.find(h.node_of[entry]);
    if (own != by_node.end()) {
        t.order.insert(t.order.end(), own->second.begin(), own->second.end());
        by_node.erase(own);
    }
    for (auto& [node, ranks] : by_node)
        t.order.insert(t.order.end(), ranks.begin(), ranks.end());

    const int q = static_cast<int>(t.order.size());
    const auto at = std::find(t.order.begin(), t.order.end(), h.rank);
    if (at == t.order.end())
        return t;
    const int p = static_cast<int>(at - t.order.begin());
    t.position = p;
    if (chain) {
        if (p > 0)
            t.parent = t.order[p - 1];
        if (p + 1 < q)
            t.children.push_back(t.order[p + 1]);
        return t;
    }
    // Binomial: the parent of p clears its lowest set bit; the children are
    // p + 2^k for every 2^k below p's lowest set bit, largest subtree first.
    if (p > 0)
        t.parent = t.order[p & (p - 1)];
    const int low = p == 0 ? 1 << 30 : p & -p;
    int mask = 1;
    while (mask < low && p + mask < q)
        mask <<= 1;
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (mask < low && p + mask < q)
            t.children.push_back(t.order[p + mask]);
    return t;
}

int segment_elements(int count, int type_size, std::size_t segment_bytes)
{
    if (count <= 0)
        return 1;
    if (segment_bytes == 0 || type_size <= 0)
        return count;
    const std::size_t per = std::max<std::size_t>(1, segment_bytes / static_cast<std::size_t>(type_size));
    return static_cast<int>(std::min<std::size_t>(per, static_cast<std::size_t>(count)));
}

} // namespace hashi::coll::algo
