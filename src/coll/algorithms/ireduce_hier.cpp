// SPDX-License-Identifier: BSD-3-Clause
// Nonblocking reduce across clusters (MPI_Ireduce).
//
// Every cluster reduces to its entry up a ClusterTree (the root is its own
// cluster's entry); the other entries send their cluster's sum to the root
// over the WAN, once per cluster, and the root adds the clusters' sums in
// cluster order into recvbuf. Pipelined by segments like iallreduce_hier.
#include "algorithms.hpp"
#include "cluster_reduce.hpp"
#include "cluster_tree.hpp"
#include "datatype.hpp"

namespace hashi::coll::algo {

namespace {
constexpr int kWindow = 8; // as in ibcast_hier.cpp
} // namespace

std::unique_ptr<Schedule> ireduce_hier(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
    int root, const Hierarchy& h, const Tuning& t, int tag)
{
    auto s = std::make_unique<Schedule>(h.nb_comm);
    if (count == 0)
        return s;
    const TypeInfo ti = type_info(type);
    const bool is_root = h.rank == root;
    // Only the root may pass MPI_IN_PLACE; its input is then in recvbuf.
    const void* contribution = sendbuf == MPI_IN_PLACE && is_root ? recvbuf : sendbuf;
    if (h.size == 1) {
        s->copy(contribution, recvbuf, count, type);
        return s;
    }
    const int seg = segment_elements(count, ti.size, t.segment_bytes);
    const int nseg = (count + seg - 1) / seg;
    const int rc = h.cluster_of[root];
    const int entry = h.my_cluster == rc ? root : default_entry(h, h.my_cluster);
    const bool is_entry = h.rank == entry;
    const ClusterTree tree = cluster_tree(h, h.my_cluster, entry, nseg > 1);

    // recvbuf is only the root's, which writes the result there: every
    // rank that sums does so in scratch space.
    const bool sums = !tree.children.empty() || is_entry;
    void* work = sums ? s->scratch(type, count) : nullptr;
    ClusterReduce up(*s, tree, contribution, work, count, type, op, tag);

    std::vector<void*> theirs(h.nclusters, nullptr);
    if (is_root)
        for (int c = 0; c < h.nclusters; ++c)
            if (c != rc)
                theirs[c] = s->scratch(type, count);
    std::vector<Schedule::Step> wan_sent;
    for (int i = 0; i < nseg; ++i) {
        const int begin = i * seg, n = std::min(seg, count - begin);
        const ClusterReduce::Steps mine = up.segment(begin, n);
        if (is_root) {
            std::vector<Schedule::Step> got(h.nclusters, Schedule::none);
            for (int c = 0; c < h.nclusters; ++c)
                if (c != rc)
                    got[c] = s->recv(element(theirs[c], ti, begin), n, type, default_entry(h, c), tag);
            auto sum_of = [&](int c) {
                return c == rc ? up.partial(begin) : static_cast<const void*>(element(theirs[c], ti, begin));
            };
            void* out = element(recvbuf, ti, begin);
            Schedule::Step result = s->copy(sum_of(0), out, n, type, {mine.ready, got[0]});
            for (int c = 1; c < h.nclusters; ++c)
                result = s->reduce(sum_of(c), out, n, type, op, {result, got[c]});
        } else if (is_entry) {
            const Schedule::Step before = i >= kWindow ? wan_sent[i - kWindow] : Schedule::none;
            wan_sent.push_back(s->send(up.partial(begin), n, type, root, tag, {mine.ready, before}));
        }
    }
    return s;
}

} // namespace hashi::coll::algo
