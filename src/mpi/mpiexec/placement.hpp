// SPDX-License-Identifier: BSD-3-Clause
// Which host each rank runs on, and the PMI_process_mapping string that tells
// MPICH which ranks share a node (and so may use shared memory).
#pragma once

#include "hostfile.hpp"

#include <string>
#include <vector>

namespace hashi::mpiexec {

struct Placement {
    std::vector<std::string> node_names; // distinct hosts, in order of first use
    std::vector<int> node_of_rank; // index into node_names
};

// Fills each host's slots in order (or `ppn` per host when ppn > 0), then
// wraps around when there are more ranks than slots, as Hydra does. With no
// hosts every rank runs on `local_host`.
Placement place_ranks(const std::vector<HostSlots>& hosts, int nranks, int ppn, const std::string& local_host);

// MPICH's "(vector,(start,count,size),...)" form: `count` consecutive nodes
// starting at node `start` each hold `size` consecutive ranks.
std::string process_mapping(const std::vector<int>& node_of_rank);

} // namespace hashi::mpiexec
