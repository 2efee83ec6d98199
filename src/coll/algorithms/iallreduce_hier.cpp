// SPDX-License-Identifier: BSD-3-Clause
// Nonblocking allreduce across clusters (MPI_Iallreduce).
//
// Every cluster reduces to its entry up a ClusterTree (binomial for one
// segment, a chain for a pipeline of several); the entries send their
// cluster's sum to each other over the WAN (every entry pair once per
// segment) and each adds the clusters' sums in cluster order, so every
// entry computes the same bits; then each entry passes the result down its
// tree. Segments pipeline through all three phases.
#include "algorithms.hpp"
#include "cluster_reduce.hpp"
#include "cluster_tree.hpp"
#include "datatype.hpp"

namespace hashi::coll::algo {

namespace {
constexpr int kWindow = 8; // as in ibcast_hier.cpp
} // namespace

std::unique_ptr<Schedule> iallreduce_hier(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
    const Hierarchy& h, const Tuning& t, int tag)
{
    auto s = std::make_unique<Schedule>(h.nb_comm);
    if (count == 0)
        return s;
    const TypeInfo ti = type_info(type);
    const void* contribution = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    if (h.size == 1) {
        s->copy(contribution, recvbuf, count, type);
        return s;
    }
    const int seg = segment_elements(count, ti.size, t.segment_bytes);
    const int nseg = (count + seg - 1) / seg;
    const int entry = default_entry(h, h.my_cluster);
    const bool is_entry = h.rank == entry;
    const ClusterTree tree = cluster_tree(h, h.my_cluster, entry, nseg > 1);

    // The entry sums in scratch space, since it writes the result to
    // recvbuf while its cluster's sum is still going out; inner ranks sum
    // in recvbuf, which the result overwrites once their sum is sent up.
    void* work = is_entry ? s->scratch(type, count) : recvbuf;
    ClusterReduce up(*s, tree, contribution, work, count, type, op, tag);

    // The other clusters' sums, at the entry.
    std::vector<int> peer(h.nclusters, -1);
    std::vector<void*> theirs(h.nclusters, nullptr);
    if (is_entry)
        for (int c = 0; c < h.nclusters; ++c)
            if (c != h.my_cluster) {
                peer[c] = default_entry(h, c);
                theirs[c] = s->scratch(type, count);
            }
    std::vector<std::vector<Schedule::Step>> wan_sent(h.nclusters), down_sent(tree.children.size());
    for (int i = 0; i < nseg; ++i) {
        const int begin = i * seg, n = std::min(seg, count - begin);
        void* out = element(recvbuf, ti, begin);
        const ClusterReduce::Steps mine = up.segment(begin, n);
        Schedule::Step result = Schedule::none;
        if (is_entry) {
            std::vector<Schedule::Step> got(h.nclusters, Schedule::none);
            for (int c = 0; c < h.nclusters; ++c) {
                if (c == h.my_cluster)
                    continue;
                const Schedule::Step before = i >= kWindow ? wan_sent[c][i - kWindow] : Schedule::none;
                wan_sent[c].push_back(s->send(up.partial(begin), n, type, peer[c], tag, {mine.ready, before}));
                got[c] = s->recv(element(theirs[c], ti, begin), n, type, peer[c], tag);
            }
            // result = sum_0 op sum_1 op ... in cluster order, on every entry.
            auto sum_of = [&](int c) {
                return c == h.my_cluster ? up.partial(begin) : static_cast<const void*>(element(theirs[c], ti, begin));
            };
            result = s->copy(sum_of(0), out, n, type, {mine.ready, got[0]});
            for (int c = 1; c < h.nclusters; ++c)
                result = s->reduce(sum_of(c), out, n, type, op, {result, got[c]});
        } else {
            // The result lands where this rank's sum (or contribution) was
            // sent from: only once that send is done.
            result = s->recv(out, n, type, tree.parent, tag, {mine.sent_up});
        }
        for (std::size_t d = 0; d < tree.children.size(); ++d) {
            const Schedule::Step before = i >= kWindow ? down_sent[d][i - kWindow] : Schedule::none;
            down_sent[d].push_back(s->send(out, n, type, tree.children[d], tag, {result, before}));
        }
    }
    return s;
}

} // namespace hashi::coll::algo
