// SPDX-License-Identifier: BSD-3-Clause
// Chooses the algorithm for one collective call: a forced choice from the
// environment, MPICH where we have nothing better (one cluster,
// non-commutative ops), else the cheapest candidate under the cost model.
// Kept apart from the algorithms: it only returns names and tuning.
#pragma once

#include "collective.hpp"
#include "hierarchy.hpp"
#include "tuning.hpp"

#include <string>

namespace hashi::coll {

struct Call {
    Collective collective;
    // Bytes the call moves, the same number on every rank: the vector for
    // bcast/reduce/allreduce, the whole result for allgather(v) and
    // reduce_scatter_block, one rank's send total for alltoall, and 0 for
    // alltoallv (its counts differ between ranks) and barrier.
    double bytes = 0;
    int count = 0;
    bool commutative = true;
    bool user_op = false;
};

struct Choice {
    std::string algorithm; // "mpich" or one of algorithms_of(c)
    Tuning tuning;
};

Choice choose(const Hierarchy& h, const Call& call);

// Alltoall blocks from this size on go by single copy (alltoall_cma) when
// the communicator is on one node. Below it MPICH's shared-memory cells cost
// less than a system call per block, and a block fits in a few cells.
constexpr double kCmaMinBlock = 32 * 1024;

} // namespace hashi::coll
