// SPDX-License-Identifier: BSD-3-Clause
// Which CPUs each rank on one node is bound to, computed from that node's
// topology the way MPICH's Hydra computes it (tools/topo/hwloc), so a job
// script written for Hydra binds the same way under Hashi:
//  - the node is cut into map domains of -map-by's objects (N of them for
//    obj:N), in hwloc's logical order;
//  - a binding is -bind-to's objects (N for obj:N) starting at the first
//    unused hardware thread of a domain; bindings go round the domains one
//    at a time (-bind-to core -map-by socket alternates sockets), and a
//    binding smaller than its domain moves on inside it;
//  - local rank i gets binding i mod (number of bindings): more ranks than
//    cores share cores, in the same order again, as with Hydra, rather
//    than fail (running 8 ranks on 2 cores is normal in tests and on the
//    testbed). rr and user: follow Hydra too; a user: list binds only the
//    ranks it lists.
// One deliberate difference: a binding of several objects stays inside its
// map domain (Hydra may take the next object of a larger enclosing one).
#pragma once

#include "binding_spec.hpp"
#include "cpu_topology.hpp"

#include <optional>
#include <string>
#include <vector>

namespace hashi::mpiexec {

struct CpuBinding {
    std::vector<unsigned> cpus; // OS numbers, ascending
    std::string what; // "core 1", "cores 2-3", "socket 0": hwloc logical indices
};

struct BindingPlan {
    std::vector<CpuBinding> bindings;
    bool wraps = true; // false for user:, whose unlisted ranks stay unbound
};

// The bindings of `spec` on `topo`. Throws BindingError saying why they
// cannot be satisfied on this node (no such object, too few of them, a
// user: CPU that is not there); the caller adds which node and rank.
BindingPlan plan_bindings(const CpuTopology& topo, const BindingSpec& spec);

// The binding of the rank with index `local_index` among this node's
// ranks; nullopt when it stays unbound.
std::optional<CpuBinding> binding_of(const BindingPlan& plan, int local_index);

} // namespace hashi::mpiexec
