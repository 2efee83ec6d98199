// SPDX-License-Identifier: BSD-3-Clause
#include "cpu_topology.hpp"

#include <hwloc.h>

#include <algorithm>
#include <map>

namespace hashi::mpiexec {
namespace {

hwloc_obj_type_t hwloc_type(TopoLevel level)
{
    switch (level) {
    case TopoLevel::machine:
        return HWLOC_OBJ_MACHINE;
    case TopoLevel::numa:
        return HWLOC_OBJ_NUMANODE;
    case TopoLevel::package:
        return HWLOC_OBJ_PACKAGE;
    case TopoLevel::l5cache:
        return HWLOC_OBJ_L5CACHE;
    case TopoLevel::l4cache:
        return HWLOC_OBJ_L4CACHE;
    case TopoLevel::l3cache:
        return HWLOC_OBJ_L3CACHE;
    case TopoLevel::l2cache:
        return HWLOC_OBJ_L2CACHE;
    case TopoLevel::l1cache:
        return HWLOC_OBJ_L1CACHE;
    case TopoLevel::l3icache:
        return HWLOC_OBJ_L3ICACHE;
    case TopoLevel::l2icache:
        return HWLOC_OBJ_L2ICACHE;
    case TopoLevel::l1icache:
        return HWLOC_OBJ_L1ICACHE;
    case TopoLevel::core:
        return HWLOC_OBJ_CORE;
    case TopoLevel::hwthread:
        return HWLOC_OBJ_PU;
    }
    return HWLOC_OBJ_PU;
}

// Loads a topology after `configure` has chosen its source.
template <typename Configure> hwloc_topology* load(std::string_view what, Configure configure)
{
    hwloc_topology* topo = nullptr;
    if (hwloc_topology_init(&topo) != 0) {
        throw BindingError("hwloc cannot start (hwloc_topology_init failed)");
    }
    if (!configure(topo) || hwloc_topology_load(topo) != 0) {
        hwloc_topology_destroy(topo);
        throw BindingError("hwloc cannot load the topology of " + std::string(what));
    }
    return topo;
}

} // namespace

void CpuTopology::Free::operator()(hwloc_topology* t) const
{
    hwloc_topology_destroy(t);
}

CpuTopology::CpuTopology(std::unique_ptr<hwloc_topology, Free> topo) : topo_(std::move(topo))
{
    for (hwloc_obj_t pu = nullptr; (pu = hwloc_get_next_obj_by_type(topo_.get(), HWLOC_OBJ_PU, pu)) != nullptr;) {
        pus_.push_back(pu->os_index);
    }
}

CpuTopology CpuTopology::of_this_process()
{
    std::unique_ptr<hwloc_topology, Free> topo(load("this machine", [](hwloc_topology*) { return true; }));
    // Only the CPUs this process may run on: a binding outside them would
    // be refused by the kernel, or would break out of the user's taskset.
    hwloc_bitmap_t mine = hwloc_bitmap_alloc();
    if (hwloc_get_cpubind(topo.get(), mine, HWLOC_CPUBIND_THREAD) == 0 && !hwloc_bitmap_iszero(mine) &&
        !hwloc_bitmap_isequal(mine, hwloc_topology_get_topology_cpuset(topo.get()))) {
        hwloc_topology_restrict(topo.get(), mine, HWLOC_RESTRICT_FLAG_REMOVE_CPULESS);
    }
    hwloc_bitmap_free(mine);
    return CpuTopology(std::move(topo));
}

CpuTopology CpuTopology::synthetic(std::string_view description)
{
    std::string text(description);
    return CpuTopology(std::unique_ptr<hwloc_topology, Free>(load("synthetic '" + text + "'",
        [&](hwloc_topology* t) { return hwloc_topology_set_synthetic(t, text.c_str()) == 0; })));
}

CpuTopology CpuTopology::from_xml_file(const std::string& path)
{
    return CpuTopology(std::unique_ptr<hwloc_topology, Free>(
        load("XML file " + path, [&](hwloc_topology* t) { return hwloc_topology_set_xml(t, path.c_str()) == 0; })));
}

std::vector<CpuTopology::Object> CpuTopology::objects(TopoLevel level) const
{
    std::map<unsigned, int> position; // OS number -> position in pus_
    for (size_t i = 0; i < pus_.size(); ++i) {
        position[pus_[i]] = static_cast<int>(i);
    }
    std::vector<Object> list;
    const auto type = hwloc_type(level);
    for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_obj_by_type(topo_.get(), type, o)) != nullptr;) {
        if (o->cpuset == nullptr) {
            continue;
        }
        Object obj {o->logical_index, {}};
        unsigned id = 0;
        hwloc_bitmap_foreach_begin(id, o->cpuset)
        {
            if (auto it = position.find(id); it != position.end()) {
                obj.pus.push_back(it->second);
            }
        }
        hwloc_bitmap_foreach_end();
        std::sort(obj.pus.begin(), obj.pus.end());
        const bool repeated =
            std::any_of(list.begin(), list.end(), [&](const Object& o2) { return o2.pus == obj.pus; });
        if (!obj.pus.empty() && !repeated) {
            list.push_back(std::move(obj));
        }
    }
    return list;
}

std::string CpuTopology::summary() const
{
    std::string s;
    for (auto level : {TopoLevel::package, TopoLevel::numa, TopoLevel::l3cache, TopoLevel::core, TopoLevel::hwthread}) {
        const auto n = objects(level).size();
        if (n == 0) {
            continue;
        }
        if (!s.empty()) {
            s += ", ";
        }
        s += std::to_string(n) + " " + (n == 1 ? std::string(level_name(level)) : level_plural(level));
    }
    return s;
}

std::string cpu_list_text(std::vector<unsigned> cpus)
{
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    std::string s;
    for (size_t i = 0; i < cpus.size();) {
        size_t j = i;
        while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) {
            ++j;
        }
        if (!s.empty()) {
            s += ',';
        }
        s += std::to_string(cpus[i]);
        if (j > i) {
            s += '-' + std::to_string(cpus[j]);
        }
        i = j + 1;
    }
    return s;
}

} // namespace hashi::mpiexec
