// SPDX-License-Identifier: BSD-3-Clause
// The collectives libhashi-coll handles, and the names of their
// algorithms as the selector, the environment and the verbose output
// spell them.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace hashi::coll {

enum class Collective {
    bcast,
    reduce,
    allreduce,
    allgather,
    allgatherv,
    alltoall,
    alltoallv,
    barrier,
    reduce_scatter_block,
    // Nonblocking forms with algorithms of our own (the others go to MPICH).
    ibcast,
    ireduce,
    iallreduce,
    ibarrier,
};
inline constexpr std::size_t kCollectives = 13;

// MPI_Ibcast -> bcast, ...; a blocking collective is its own.
Collective blocking_form(Collective c);

// "bcast", "allreduce", ... (lower case, as in HASHI_COLL_VERBOSE output).
std::string_view name_of(Collective c);
// "BCAST", ... as in HASHI_COLL_BCAST.
std::string_view env_suffix_of(Collective c);

// The algorithms Hashi has for `c`, besides "mpich" (MPICH's own choice).
std::span<const std::string_view> algorithms_of(Collective c);

} // namespace hashi::coll
