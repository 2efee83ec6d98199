// SPDX-License-Identifier: BSD-3-Clause
// The hosts and slots of a Slurm allocation, from the two variables Slurm
// sets inside salloc, sbatch and srun: SLURM_JOB_NODELIST in Slurm's
// compressed host-list form ("node[01-04,07],gpu3", "rack[1-2]-n[1-2]") and
// SLURM_TASKS_PER_NODE ("2(x3),1": two tasks on each of three nodes, then
// one). Pure functions, so every form and every malformed value is
// unit-tested; the launcher itself is -launcher slurm (launcher.hpp).
#pragma once

#include "hostfile.hpp"

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace hashi::mpiexec {

class SlurmAllocationError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Expands a Slurm host list into host names in Slurm's order. A bracket
// holds numbers and ranges ("01-04,07"; the width of the lower bound is
// kept, as Slurm keeps leading zeros), several brackets in one name expand
// to every combination, left bracket slowest. Throws SlurmAllocationError
// naming the bad part.
std::vector<std::string> expand_slurm_nodelist(std::string_view nodelist);

// Expands "2(x3),1" into {2, 2, 2, 1}. Throws SlurmAllocationError.
std::vector<int> expand_slurm_tasks_per_node(std::string_view tasks_per_node);

// The allocation's hosts with their slots; both lists must describe the
// same number of nodes. Throws SlurmAllocationError.
std::vector<HostSlots> slurm_hosts(std::string_view nodelist, std::string_view tasks_per_node);

} // namespace hashi::mpiexec
