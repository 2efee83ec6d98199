// SPDX-License-Identifier: BSD-3-Clause
#include "cluster_reduce.hpp"

namespace hashi::coll::algo {

namespace {
// Inner ranks and the entry sum in their work buffer; leaves pass their
// contribution on as it is.
bool sums_here(const ClusterTree& t)
{
    return !t.children.empty() || t.parent < 0;
}
} // namespace

ClusterReduce::ClusterReduce(Schedule& s, const ClusterTree& tree, const void* contribution, void* work, int count,
    MPI_Datatype type, MPI_Op op, int tag)
    : s_(s),
      tree_(tree),
      contribution_(contribution),
      work_(work),
      type_(type),
      op_(op),
      tag_(tag),
      info_(type_info(type))
{
    for (std::size_t i = 0; i < tree.children.size(); ++i)
        from_child_.push_back(s.scratch(type, count));
}

const void* ClusterReduce::partial(int begin) const
{
    return sums_here(tree_) ? element(static_cast<const void*>(work_), info_, begin)
                            : element(contribution_, info_, begin);
}

ClusterReduce::Steps ClusterReduce::segment(int begin, int n)
{
    Schedule::Step ready = Schedule::none;
    if (sums_here(tree_)) {
        void* work = element(work_, info_, begin);
        if (work_ != contribution_)
            ready = s_.copy(element(contribution_, info_, begin), work, n, type_);
        for (std::size_t c = 0; c < tree_.children.size(); ++c) {
            void* in = element(from_child_[c], info_, begin);
            const Schedule::Step got = s_.recv(in, n, type_, tree_.children[c], tag_);
            ready = s_.reduce(in, work, n, type_, op_, {got, ready});
        }
    }
    Schedule::Step sent_up = Schedule::none;
    if (tree_.parent >= 0)
        sent_up = s_.send(partial(begin), n, type_, tree_.parent, tag_, {ready});
    return {ready, sent_up};
}

} // namespace hashi::coll::algo
