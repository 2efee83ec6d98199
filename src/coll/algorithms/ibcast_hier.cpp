// SPDX-License-Identifier: BSD-3-Clause
// Nonblocking bcast across clusters (MPI_Ibcast).
//
// One segment: the root sends to the entry of every other cluster first
// (the WAN latency starts at once), then down a binomial tree of its own
// cluster; every entry passes the message down its cluster's binomial tree.
// So the message crosses the WAN once per cluster, from one sender.
//
// Several segments: a pipeline. Each cluster is a chain (entry first, one
// node after another); the root's cluster's chain hands every segment to
// the next rank, and its last ranks also pass it to the other clusters'
// entries, so no node link carries the message more than twice (once in,
// once out) and the WAN is crossed once per cluster, as segments stream.
#include "algorithms.hpp"
#include "cluster_tree.hpp"
#include "datatype.hpp"

namespace hashi::coll::algo {

namespace {
// Sends of a stream wait for the send this many segments back, so a root
// does not post its whole message at once.
constexpr int kWindow = 8;
} // namespace

std::unique_ptr<Schedule> ibcast_hier(
    void* buf, int count, MPI_Datatype type, int root, const Hierarchy& h, const Tuning& t, int tag)
{
    auto s = std::make_unique<Schedule>(h.nb_comm);
    if (count == 0 || h.size == 1)
        return s;
    const TypeInfo ti = type_info(type);
    const int seg = segment_elements(count, ti.size, t.segment_bytes);
    const int nseg = (count + seg - 1) / seg;
    const bool chain = nseg > 1;
    const int rc = h.cluster_of[root];
    const ClusterTree root_tree = cluster_tree(h, rc, root, chain);
    const int entry = h.my_cluster == rc ? root : default_entry(h, h.my_cluster);
    const ClusterTree tree = h.my_cluster == rc ? root_tree : cluster_tree(h, h.my_cluster, entry, chain);

    // Who sends to the entry of remote cluster c: the root for one
    // segment, the chain's last ranks (round robin) in a pipeline.
    const int q = static_cast<int>(root_tree.order.size());
    auto feeder_of = [&](int c) {
        if (!chain)
            return root;
        const int j = c < rc ? c : c - 1;
        return root_tree.order[q - 1 - j % q];
    };

    int source = -1;
    if (h.rank != root)
        source = h.my_cluster != rc && h.rank == entry ? feeder_of(h.my_cluster) : tree.parent;
    std::vector<int> dests;
    if (h.my_cluster == rc)
        for (int c = 0; c < h.nclusters; ++c)
            if (c != rc && feeder_of(c) == h.rank)
                dests.push_back(default_entry(h, c));
    dests.insert(dests.end(), tree.children.begin(), tree.children.end());

    std::vector<std::vector<Schedule::Step>> sent(dests.size());
    for (int i = 0; i < nseg; ++i) {
        const int begin = i * seg, n = std::min(seg, count - begin);
        void* data = element(buf, ti, begin);
        const Schedule::Step got = source >= 0 ? s->recv(data, n, type, source, tag) : Schedule::none;
        for (std::size_t d = 0; d < dests.size(); ++d) {
            const Schedule::Step before = i >= kWindow ? sent[d][i - kWindow] : Schedule::none;
            sent[d].push_back(s->send(data, n, type, dests[d], tag, {got, before}));
        }
    }
    return s;
}

} // namespace hashi::coll::algo
