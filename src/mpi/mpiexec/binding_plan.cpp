// SPDX-License-Identifier: BSD-3-Clause
#include "binding_plan.hpp"

#include <algorithm>
#include <numeric>

namespace hashi::mpiexec {
namespace {

std::string count_of(size_t n, TopoLevel level)
{
    return std::to_string(n) + " " + (n == 1 ? std::string(level_name(level)) : level_plural(level));
}

std::vector<CpuTopology::Object> objects_or_refuse(
    const CpuTopology& topo, TopoLevel level, int count, std::string_view flag, const std::string& text)
{
    auto list = topo.objects(level);
    if (list.empty()) {
        throw BindingError(std::string(flag) + " " + text + ": this node has no " + std::string(level_name(level)) +
            " in its hwloc topology (it has " + topo.summary() + "); choose another object, e.g. core");
    }
    if (static_cast<size_t>(count) > list.size()) {
        throw BindingError(std::string(flag) + " " + text + ": asks for " + count_of(count, level) +
            " per rank, this node has " + count_of(list.size(), level) + " (" + topo.summary() + ")");
    }
    return list;
}

CpuBinding as_binding(
    const CpuTopology& topo, const std::vector<int>& pus, TopoLevel level, const std::vector<unsigned>& logical)
{
    CpuBinding b;
    for (int p : pus) {
        b.cpus.push_back(topo.pu_os_index()[p]);
    }
    std::sort(b.cpus.begin(), b.cpus.end());
    b.cpus.erase(std::unique(b.cpus.begin(), b.cpus.end()), b.cpus.end());
    b.what =
        (logical.size() == 1 ? std::string(level_name(level)) : level_plural(level)) + " " + cpu_list_text(logical);
    return b;
}

BindingPlan plan_objects(const CpuTopology& topo, const BindingSpec& spec)
{
    const auto binds = objects_or_refuse(topo, spec.bind.level, spec.bind.count, "-bind-to", spec.bind_text);
    const auto maps = objects_or_refuse(
        topo, spec.map.level, spec.map.count, "-map-by", spec.map_text.empty() ? spec.bind_text : spec.map_text);
    const size_t total = topo.pu_os_index().size();
    const size_t pus_per_binding = total / binds.size() * spec.bind.count;
    const size_t pus_per_domain = total / maps.size() * spec.map.count;
    const bool inside_domain = pus_per_binding < pus_per_domain;

    // Map domains: map.count consecutive map objects each, going round the
    // list until the domains tile it a whole number of times.
    const size_t mc = spec.map.count;
    const size_t ndomains = std::lcm(maps.size(), mc) / mc;
    std::vector<std::vector<int>> domain(ndomains); // PU positions, ascending
    std::vector<int> start(ndomains); // next unused PU of each domain
    for (size_t j = 0; j < ndomains; ++j) {
        for (size_t k = 0; k < mc; ++k) {
            const auto& m = maps[(j * mc + k) % maps.size()];
            domain[j].insert(domain[j].end(), m.pus.begin(), m.pus.end());
        }
        start[j] = maps[(j * mc) % maps.size()].pus.front();
        std::sort(domain[j].begin(), domain[j].end());
        domain[j].erase(std::unique(domain[j].begin(), domain[j].end()), domain[j].end());
    }
    // Which binding object holds each PU.
    std::vector<int> bind_object_of(total, -1);
    for (size_t b = 0; b < binds.size(); ++b) {
        for (int p : binds[b].pus) {
            if (bind_object_of[p] < 0) {
                bind_object_of[p] = static_cast<int>(b);
            }
        }
    }
    auto within = [&](const std::vector<int>& pus, const std::vector<int>& dom) {
        return std::includes(dom.begin(), dom.end(), pus.begin(), pus.end());
    };

    const size_t nbindings =
        inside_domain ? std::lcm(pus_per_domain, pus_per_binding) / pus_per_binding * ndomains : ndomains;
    BindingPlan plan;
    while (plan.bindings.size() < nbindings) {
        for (size_t j = 0; j < ndomains && plan.bindings.size() < nbindings; ++j) {
            int cur = bind_object_of[start[j]];
            if (cur < 0) {
                throw BindingError("-bind-to " + spec.bind_text + ": hardware thread " +
                    std::to_string(topo.pu_os_index()[start[j]]) + " is in no " +
                    std::string(level_name(spec.bind.level)) + " (" + topo.summary() + ")");
            }
            std::vector<int> pus;
            std::vector<unsigned> logical;
            for (int k = 0; k < spec.bind.count; ++k) {
                const auto& obj = binds[cur];
                pus.insert(pus.end(), obj.pus.begin(), obj.pus.end());
                logical.push_back(obj.logical_index);
                int next = (cur + 1) % static_cast<int>(binds.size());
                if (inside_domain) {
                    while (next != cur && !within(binds[next].pus, domain[j])) {
                        next = (next + 1) % static_cast<int>(binds.size());
                    }
                }
                cur = next;
            }
            plan.bindings.push_back(as_binding(topo, pus, spec.bind.level, logical));
            if (inside_domain) {
                // The next binding in this domain starts pus_per_binding
                // hardware threads further on, wrapping inside the domain.
                auto at = std::find(domain[j].begin(), domain[j].end(), start[j]) - domain[j].begin();
                start[j] = domain[j][(at + pus_per_binding) % domain[j].size()];
            }
        }
    }
    return plan;
}

} // namespace

BindingPlan plan_bindings(const CpuTopology& topo, const BindingSpec& spec)
{
    BindingPlan plan;
    auto cpus = topo.pu_os_index();
    std::sort(cpus.begin(), cpus.end());
    switch (spec.kind) {
    case BindKind::none:
        break;
    case BindKind::object:
        plan = plan_objects(topo, spec);
        break;
    case BindKind::round_robin:
        for (unsigned c : cpus) {
            plan.bindings.push_back({{c}, "cpu " + std::to_string(c) + " (rr)"});
        }
        break;
    case BindKind::user:
        plan.wraps = false;
        for (size_t i = 0; i < spec.user_cpus.size(); ++i) {
            for (unsigned c : spec.user_cpus[i]) {
                if (!std::binary_search(cpus.begin(), cpus.end(), c)) {
                    throw BindingError("-bind-to " + spec.bind_text + ": CPU " + std::to_string(c) +
                        " is not one this node lets us use (" + cpu_list_text(cpus) + ")");
                }
            }
            CpuBinding b {spec.user_cpus[i], {}};
            std::sort(b.cpus.begin(), b.cpus.end());
            b.cpus.erase(std::unique(b.cpus.begin(), b.cpus.end()), b.cpus.end());
            b.what = "user: entry " + std::to_string(i);
            plan.bindings.push_back(std::move(b));
        }
        break;
    }
    return plan;
}

std::optional<CpuBinding> binding_of(const BindingPlan& plan, int local_index)
{
    if (plan.bindings.empty() || local_index < 0 ||
        (!plan.wraps && static_cast<size_t>(local_index) >= plan.bindings.size())) {
        return std::nullopt;
    }
    return plan.bindings[static_cast<size_t>(local_index) % plan.bindings.size()];
}

} // namespace hashi::mpiexec
