// SPDX-License-Identifier: BSD-3-Clause
// Nonblocking barrier across clusters (MPI_Ibarrier): arrivals go up a
// binomial tree to each cluster's entry, the entries tell each other over
// the WAN (one message per entry pair, one WAN latency in all), and each
// entry releases its cluster down the same tree once it has heard from its
// whole cluster and from every other entry.
#include "algorithms.hpp"
#include "cluster_tree.hpp"

namespace hashi::coll::algo {

std::unique_ptr<Schedule> ibarrier_hier(const Hierarchy& h, int tag)
{
    auto s = std::make_unique<Schedule>(h.nb_comm);
    if (h.size == 1)
        return s;
    const int entry = default_entry(h, h.my_cluster);
    const ClusterTree tree = cluster_tree(h, h.my_cluster, entry, false);

    // A zero-byte message per edge; steps are joined through a copy of
    // nothing, which completes as soon as its dependencies have.
    Schedule::Step arrived = Schedule::none; // my whole subtree has arrived
    {
        std::vector<Schedule::Step> from_children;
        for (int child : tree.children)
            from_children.push_back(s->recv(nullptr, 0, MPI_BYTE, child, tag));
        arrived = s->copy(nullptr, nullptr, 0, MPI_BYTE);
        for (Schedule::Step st : from_children)
            s->depend(arrived, st);
    }
    Schedule::Step release = Schedule::none;
    if (tree.parent >= 0) {
        s->send(nullptr, 0, MPI_BYTE, tree.parent, tag, {arrived});
        release = s->recv(nullptr, 0, MPI_BYTE, tree.parent, tag);
    } else {
        release = s->copy(nullptr, nullptr, 0, MPI_BYTE, {arrived});
        for (int c = 0; c < h.nclusters; ++c) {
            if (c == h.my_cluster)
                continue;
            s->send(nullptr, 0, MPI_BYTE, default_entry(h, c), tag, {arrived});
            s->depend(release, s->recv(nullptr, 0, MPI_BYTE, default_entry(h, c), tag));
        }
    }
    for (int child : tree.children)
        s->send(nullptr, 0, MPI_BYTE, child, tag, {release});
    return s;
}

} // namespace hashi::coll::algo
