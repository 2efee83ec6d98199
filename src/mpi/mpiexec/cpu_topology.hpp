// SPDX-License-Identifier: BSD-3-Clause
// One node's processors as hwloc sees them, reduced to what binding needs:
// the hardware threads (PUs) in hwloc's logical order with their OS
// numbers, and for each level (core, socket, l3cache, ...) its objects as
// sets of those PUs. Loaded from the running machine (restricted to the
// CPUs the calling process may use, so a taskset or cgroup limit on
// mpiexec or on a remote shell is honoured), or, for tests, from hwloc's
// synthetic description ("package:2 core:4 pu:2") or an XML export.
#pragma once

#include "binding_spec.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

struct hwloc_topology;

namespace hashi::mpiexec {

class CpuTopology {
public:
    struct Object {
        unsigned logical_index = 0; // hwloc's logical index within its level
        std::vector<int> pus; // positions in pu_os_index(), ascending
    };

    // Throw BindingError when hwloc cannot load the topology.
    static CpuTopology of_this_process();
    static CpuTopology synthetic(std::string_view description);
    static CpuTopology from_xml_file(const std::string& path);

    // OS number (what sched_setaffinity and taskset use) of each PU.
    [[nodiscard]] const std::vector<unsigned>& pu_os_index() const { return pus_; }
    // The level's objects in logical order; objects with the same PUs as an
    // earlier one (a NUMA node and its package, say) are listed once, and
    // objects without PUs not at all. Empty when the node has none.
    [[nodiscard]] std::vector<Object> objects(TopoLevel level) const;
    // "1 socket, 2 cores, 2 hwthreads" for messages.
    [[nodiscard]] std::string summary() const;

private:
    struct Free {
        void operator()(hwloc_topology* t) const;
    };
    explicit CpuTopology(std::unique_ptr<hwloc_topology, Free> topo);

    std::unique_ptr<hwloc_topology, Free> topo_;
    std::vector<unsigned> pus_;
};

// "0-3,8" for a list of CPU numbers, as taskset -c and /proc show them.
std::string cpu_list_text(std::vector<unsigned> cpus);

} // namespace hashi::mpiexec
