// SPDX-License-Identifier: BSD-3-Clause
#include "collective.hpp"

#include <array>

namespace hashi::coll {

namespace {
constexpr std::array<std::string_view, kCollectives> names {"bcast", "reduce", "allreduce", "allgather", "allgatherv",
    "alltoall", "alltoallv", "barrier", "reduce_scatter_block", "ibcast", "ireduce", "iallreduce", "ibarrier"};
constexpr std::array<std::string_view, kCollectives> env_names {"BCAST", "REDUCE", "ALLREDUCE", "ALLGATHER",
    "ALLGATHERV", "ALLTOALL", "ALLTOALLV", "BARRIER", "REDUCE_SCATTER_BLOCK", "IBCAST", "IREDUCE", "IALLREDUCE",
    "IBARRIER"};

constexpr std::array<std::string_view, 2> bcast_algos {"leader", "matsuda"};
constexpr std::array<std::string_view, 6> allreduce_algos {
    "leader", "matsuda", "lr_lr", "lr_rab", "lr_lr_pipe", "ring"};
constexpr std::array<std::string_view, 1> hier_only {"hier"};
constexpr std::array<std::string_view, 2> alltoall_algos {"hier", "cma"};
} // namespace

std::string_view name_of(Collective c)
{
    return names[static_cast<std::size_t>(c)];
}
std::string_view env_suffix_of(Collective c)
{
    return env_names[static_cast<std::size_t>(c)];
}

Collective blocking_form(Collective c)
{
    switch (c) {
    case Collective::ibcast:
        return Collective::bcast;
    case Collective::ireduce:
        return Collective::reduce;
    case Collective::iallreduce:
        return Collective::allreduce;
    case Collective::ibarrier:
        return Collective::barrier;
    default:
        return c;
    }
}

std::span<const std::string_view> algorithms_of(Collective c)
{
    switch (c) {
    case Collective::bcast:
        return bcast_algos;
    case Collective::allreduce:
        return allreduce_algos;
    case Collective::alltoall:
        return alltoall_algos;
    default:
        return hier_only;
    }
}

} // namespace hashi::coll
