// SPDX-License-Identifier: BSD-3-Clause
// The reduction inside one cluster that the nonblocking reduce and
// allreduce share: segment by segment, every rank of a ClusterTree adds
// its children's partial results to its own contribution and sends the sum
// to its parent, so the entry ends up with the cluster's reduction.
// Children are added in a fixed order, so the result is the same however
// the messages arrive (ops are commutative here, as in every reduction the
// selector gives us).
#pragma once

#include "cluster_tree.hpp"
#include "datatype.hpp"
#include "schedule.hpp"

#include <mpi.h>

#include <vector>

namespace hashi::coll::algo {

class ClusterReduce {
public:
    // contribution: this rank's input. work: where an inner rank or the
    // entry sums its subtree, a buffer of count elements (it may be the
    // contribution itself, then nothing is copied); leaves never touch it
    // and send their contribution as it is.
    ClusterReduce(Schedule& s, const ClusterTree& tree, const void* contribution, void* work, int count,
        MPI_Datatype type, MPI_Op op, int tag);

    struct Steps {
        // After this, partial(begin) holds this subtree's sum of the
        // segment (Schedule::none: it already does).
        Schedule::Step ready = Schedule::none;
        // The send of that sum to the parent (none at the entry).
        Schedule::Step sent_up = Schedule::none;
    };
    // Adds the steps for elements [begin, begin + n).
    Steps segment(int begin, int n);
    // Where this rank's subtree sum of element `begin` is.
    const void* partial(int begin) const;

private:
    Schedule& s_;
    const ClusterTree& tree_;
    const void* contribution_;
    void* work_;
    MPI_Datatype type_;
    MPI_Op op_;
    int tag_;
    TypeInfo info_;
    std::vector<void*> from_child_; // a receive buffer per child
};

} // namespace hashi::coll::algo
