// SPDX-License-Identifier: BSD-3-Clause
// Builds a communicator's Hierarchy on its first collective and caches it
// as an attribute, so later calls find it in O(1); the attribute's delete
// callback frees our sub-communicators when the user frees theirs.
#include "hierarchy.hpp"

#include "common/environment.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>

namespace hashi::coll {

namespace {

int keyval = MPI_KEYVAL_INVALID;
std::once_flag keyval_once;

// Pins of hierarchies with nonblocking collectives in flight, and the
// ones whose communicator was freed meanwhile (freed at the last unpin).
std::mutex pins_mutex;
std::map<const Hierarchy*, int> pins;
std::set<const Hierarchy*> orphans;

void free_hierarchy(Hierarchy* h)
{
    for (MPI_Comm* c : {&h->node_comm, &h->cluster_comm, &h->nb_comm, &h->comm})
        if (*c != MPI_COMM_NULL)
            PMPI_Comm_free(c);
    delete h;
}

int delete_hierarchy(MPI_Comm, int, void* value, void*)
{
    auto* h = static_cast<Hierarchy*>(value);
    {
        std::lock_guard lock(pins_mutex);
        if (pins.count(h)) {
            orphans.insert(h);
            return MPI_SUCCESS;
        }
    }
    free_hierarchy(h);
    return MPI_SUCCESS;
}

} // namespace

void derive_layout(Hierarchy& h, const std::vector<int>& node_leader)
{
    // Dense node numbering in the order of the nodes' lowest ranks.
    std::map<int, int> node_index;
    for (int r = 0; r < h.size; ++r)
        node_index.emplace(node_leader[r], 0);
    int n = 0;
    for (auto& [leader, index] : node_index)
        index = n++;
    h.nnodes = n;
    h.node_of.resize(h.size);
    for (int r = 0; r < h.size; ++r)
        h.node_of[r] = node_index[node_leader[r]];

    h.members.assign(h.nclusters, {});
    h.index_in_cluster.resize(h.size);
    for (int r = 0; r < h.size; ++r) {
        auto& m = h.members[h.cluster_of[r]];
        h.index_in_cluster[r] = static_cast<int>(m.size());
        m.push_back(r);
    }
    h.my_cluster = h.cluster_of[h.rank];
    h.cluster_rank = h.index_in_cluster[h.rank];

    // Lanes: round-robin over the cluster's nodes, so lanes 0..nodes-1 are
    // on distinct nodes.
    h.lanes.assign(h.nclusters, {});
    h.lane_of.resize(h.size);
    for (int c = 0; c < h.nclusters; ++c) {
        std::map<int, std::vector<int>> by_node; // node -> ranks, ascending
        for (int r : h.members[c])
            by_node[h.node_of[r]].push_back(r);
        auto& lanes = h.lanes[c];
        for (std::size_t round = 0; lanes.size() < h.members[c].size(); ++round)
            for (auto& [node, ranks] : by_node)
                if (round < ranks.size())
                    lanes.push_back(ranks[round]);
        for (std::size_t j = 0; j < lanes.size(); ++j)
            h.lane_of[lanes[j]] = static_cast<int>(j);
    }
    h.my_lane = h.lane_of[h.rank];
    h.min_cluster_size = h.size;
    h.max_cluster_size = 0;
    for (auto& m : h.members) {
        h.min_cluster_size = std::min(h.min_cluster_size, static_cast<int>(m.size()));
        h.max_cluster_size = std::max(h.max_cluster_size, static_cast<int>(m.size()));
    }
}

namespace {

Hierarchy* build(MPI_Comm user_comm)
{
    auto* h = new Hierarchy;
    PMPI_Comm_dup(user_comm, &h->comm);
    PMPI_Comm_dup(h->comm, &h->nb_comm);
    PMPI_Comm_rank(h->comm, &h->rank);
    PMPI_Comm_size(h->comm, &h->size);

    // Cluster ids of all ranks, renumbered densely in ascending order.
    std::vector<int> ids(h->size);
    const int mine = my_cluster_id();
    PMPI_Allgather(&mine, 1, MPI_INT, ids.data(), 1, MPI_INT, h->comm);
    std::vector<int> distinct = ids;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    h->nclusters = static_cast<int>(distinct.size());
    h->cluster_of.resize(h->size);
    for (int r = 0; r < h->size; ++r)
        h->cluster_of[r] =
            static_cast<int>(std::lower_bound(distinct.begin(), distinct.end(), ids[r]) - distinct.begin());

    PMPI_Comm_split(h->comm, h->cluster_of[h->rank], h->rank, &h->cluster_comm);

    // A node is the shared-memory domain intersected with the cluster: in a
    // test, one host can carry ranks of two emulated clusters.
    MPI_Comm shared = MPI_COMM_NULL;
    PMPI_Comm_split_type(h->cluster_comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
    h->node_comm = shared;
    PMPI_Comm_rank(h->node_comm, &h->node_rank);
    int leader = h->rank;
    PMPI_Bcast(&leader, 1, MPI_INT, 0, h->node_comm);
    std::vector<int> node_leader(h->size);
    PMPI_Allgather(&leader, 1, MPI_INT, node_leader.data(), 1, MPI_INT, h->comm);

    derive_layout(*h, node_leader);
    return h;
}

} // namespace

int my_cluster_id()
{
    static const int id = [] {
        std::string error;
        const auto n = env_whole("HASHI_CLUSTER_ID", 0, {.hi = 0x7fffffff}, error);
        if (!n) {
            std::fprintf(stderr,
                "hashi-coll: error: %s (the cluster's number: Hashi's mpiexec sets it, -client K gives K)\n",
                error.c_str());
            std::exit(1);
        }
        return static_cast<int>(*n);
    }();
    return id;
}

const Hierarchy* hierarchy_of(MPI_Comm comm)
{
    int inter = 0;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return nullptr;
    std::call_once(
        keyval_once, [] { PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_hierarchy, &keyval, nullptr); });
    void* value = nullptr;
    int found = 0;
    PMPI_Comm_get_attr(comm, keyval, &value, &found);
    if (found)
        return static_cast<Hierarchy*>(value);
    Hierarchy* h = build(comm);
    PMPI_Comm_set_attr(comm, keyval, h);
    return h;
}

const Hierarchy* cached_hierarchy_of(MPI_Comm comm)
{
    int inter = 0;
    if (keyval == MPI_KEYVAL_INVALID || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return nullptr;
    void* value = nullptr;
    int found = 0;
    PMPI_Comm_get_attr(comm, keyval, &value, &found);
    return found ? static_cast<const Hierarchy*>(value) : nullptr;
}

void pin_hierarchy(const Hierarchy* h)
{
    std::lock_guard lock(pins_mutex);
    ++pins[h];
}

void unpin_hierarchy(const Hierarchy* h)
{
    {
        std::lock_guard lock(pins_mutex);
        auto it = pins.find(h);
        if (it == pins.end() || --it->second > 0)
            return;
        pins.erase(it);
        if (orphans.erase(h) == 0)
            return;
    }
    free_hierarchy(const_cast<Hierarchy*>(h));
}

void forget_hierarchy(MPI_Comm comm)
{
    if (keyval == MPI_KEYVAL_INVALID)
        return;
    void* value = nullptr;
    int found = 0;
    PMPI_Comm_get_attr(comm, keyval, &value, &found);
    if (found)
        PMPI_Comm_delete_attr(comm, keyval);
}

} // namespace hashi::coll
