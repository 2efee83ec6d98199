// SPDX-License-Identifier: BSD-3-Clause
#include "placement.hpp"

#include <map>

namespace hashi::mpiexec {

Placement place_ranks(const std::vector<HostSlots>& hosts, int nranks, int ppn, const std::string& local_host)
{
    Placement p;
    std::map<std::string, int> index;
    auto node_id = [&](const std::string& name) {
        auto [it, inserted] = index.try_emplace(name, static_cast<int>(p.node_names.size()));
        if (inserted) {
            p.node_names.push_back(name);
        }
        return it->second;
    };
    p.node_of_rank.reserve(nranks);
    if (hosts.empty()) {
        int id = node_id(local_host);
        p.node_of_rank.assign(nranks, id);
        return p;
    }
    size_t h = 0;
    while (static_cast<int>(p.node_of_rank.size()) < nranks) {
        const auto& host = hosts[h];
        int take = ppn > 0 ? ppn : host.slots;
        int id = node_id(host.name);
        for (int i = 0; i < take && static_cast<int>(p.node_of_rank.size()) < nranks; ++i) {
            p.node_of_rank.push_back(id);
        }
        h = (h + 1) % hosts.size();
    }
    return p;
}

std::string process_mapping(const std::vector<int>& node_of_rank)
{
    // Runs of ranks on one node, then runs of equal-sized runs on
    // consecutive nodes folded into one triple.
    struct Triple {
        int start, count, size;
    };
    std::vector<Triple> triples;
    size_t i = 0;
    while (i < node_of_rank.size()) {
        size_t j = i;
        while (j < node_of_rank.size() && node_of_rank[j] == node_of_rank[i]) {
            ++j;
        }
        int node = node_of_rank[i];
        int size = static_cast<int>(j - i);
        if (!triples.empty()) {
            auto& last = triples.back();
            if (last.size == size && last.start + last.count == node) {
                ++last.count;
                i = j;
                continue;
            }
        }
        triples.push_back({node, 1, size});
        i = j;
    }
    std::string s = "(vector";
    for (const auto& t : triples) {
        s += ",(" + std::to_string(t.start) + "," + std::to_string(t.count) + "," + std::to_string(t.size) + ")";
    }
    s += ")";
    return s;
}

} // namespace hashi::mpiexec
