// SPDX-License-Identifier: BSD-3-Clause
// Hierarchical barrier: arrivals climb node -> cluster -> WAN, the release
// comes back down. Inside a node every rank tells the node's leader (its
// lowest rank; shared memory, cheap); the node leaders of a cluster report
// up a binomial tree to the cluster leader; the cluster leaders run one
// dissemination barrier among themselves, ceil(log2 S) rounds of one WAN
// latency each (instead of the ceil(log2 P) WAN-crossing rounds of a flat
// dissemination); then the release goes back down the same trees. All
// messages are empty.
//
// Even release. A leader learns of the other clusters' arrival one WAN
// latency after it happened, so without care the cluster that arrives
// last is released at once and the others a WAN latency later: the next
// collective then starts skewed by that much (a bcast rooted in an early
// cluster looks twice the WAN latency long on the late one). Each leader
// therefore holds its release until one WAN latency (Tuning::wan_latency,
// the link parameters') after its own cluster was complete: with two
// clusters both are released one WAN latency after the last arrival.
// With S > 2 the news of a late arrival reaches the others after 1 to
// ceil(log2 S) hops, and the spread left is at most ceil(log2 S) - 1 WAN
// latencies (the cost model counts it).
#include "../algorithms.hpp"
#include "../pacing.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>
#include <vector>

namespace hashi::coll::algo {

namespace {

constexpr int tag_arrive = 0x4d00;
constexpr int tag_release = 0x4d01;
constexpr int tag_round = 0x4d10; // + dissemination round

int send0(int peer, int tag, MPI_Comm comm)
{
    return PMPI_Send(nullptr, 0, MPI_BYTE, peer, tag, comm);
}
int recv0(int peer, int tag, MPI_Comm comm)
{
    return PMPI_Recv(nullptr, 0, MPI_BYTE, peer, tag, comm, MPI_STATUS_IGNORE);
}

// The ranks of my node in h.comm (ascending, so the first one leads) and
// the node leaders of my cluster (cluster leader first).
void my_groups(const Hierarchy& h, std::vector<int>& node, std::vector<int>& leaders)
{
    std::map<int, int> leader_of_node; // node -> its lowest rank
    for (int r : h.members[h.my_cluster]) {
        leader_of_node.try_emplace(h.node_of[r], r);
        if (h.node_of[r] == h.node_of[h.rank])
            node.push_back(r);
    }
    for (auto& [n, r] : leader_of_node)
        leaders.push_back(r);
    std::sort(leaders.begin(), leaders.end());
}

// Dissemination among the cluster leaders: in round k, leader i signals
// leader i + 2^k and waits for leader i - 2^k (mod S); then, for an even
// release, no return before `hold` after the start (see above). Sleeping,
// not spinning: the hold is milliseconds, and the ranks share cores.
int among_clusters(const Hierarchy& h, int my_leader_index, const std::vector<int>& cluster_leader, double hold)
{
    const auto release_at = std::chrono::steady_clock::now() +
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(hold));
    const int S = h.nclusters;
    const WanShare share(h, 1);
    for (int k = 0, d = 1; d < S; ++k, d *= 2) {
        MPI_Request req;
        int err =
            PMPI_Isend(nullptr, 0, MPI_BYTE, cluster_leader[(my_leader_index + d) % S], tag_round + k, h.comm, &req);
        if (err == MPI_SUCCESS)
            err = recv0(cluster_leader[(my_leader_index - d + S) % S], tag_round + k, h.comm);
        const int werr = PMPI_Wait(&req, MPI_STATUS_IGNORE);
        if (err != MPI_SUCCESS || werr != MPI_SUCCESS)
            return err != MPI_SUCCESS ? err : werr;
    }
    std::this_thread::sleep_until(release_at);
    return MPI_SUCCESS;
}

} // namespace

int barrier_hier(const Hierarchy& h, const Tuning& t)
{
    if (h.size == 1)
        return MPI_SUCCESS;
    std::vector<int> node, leaders;
    my_groups(h, node, leaders);
    const int me = h.rank;
    int err = MPI_SUCCESS;

    // Node level: arrive at the node leader, wait for its release.
    if (me != node[0]) {
        if ((err = send0(node[0], tag_arrive, h.comm)) != MPI_SUCCESS)
            return err;
        return recv0(node[0], tag_release, h.comm);
    }
    for (std::size_t i = 1; i < node.size() && err == MPI_SUCCESS; ++i)
        err = recv0(node[i], tag_arrive, h.comm);

    // Cluster level: a binomial tree over the node leaders, rooted at
    // leaders[0]: position p reports to p minus its lowest set bit once
    // every child below it has reported.
    const int n = static_cast<int>(leaders.size());
    int p = 0;
    while (leaders[p] != me)
        ++p;
    int mask = 1;
    for (; mask < n && !(p & mask); mask <<= 1)
        if (p + mask < n && err == MPI_SUCCESS)
            err = recv0(leaders[p + mask], tag_arrive, h.comm);
    if (err == MPI_SUCCESS && p != 0)
        err = send0(leaders[p - mask], tag_arrive, h.comm);
    if (err == MPI_SUCCESS && p != 0)
        err = recv0(leaders[p - mask], tag_release, h.comm);

    // WAN level: only the cluster leaders.
    if (err == MPI_SUCCESS && p == 0 && h.nclusters > 1) {
        std::vector<int> cluster_leader(h.nclusters);
        for (int c = 0; c < h.nclusters; ++c)
            cluster_leader[c] = h.members[c][0];
        err = among_clusters(h, h.my_cluster, cluster_leader, t.wan_latency);
    }

    // Release: down the binomial tree (children in reverse order of
    // arrival), then to my node.
    for (mask >>= 1; mask > 0 && err == MPI_SUCCESS; mask >>= 1)
        if (p + mask < n)
            err = send0(leaders[p + mask], tag_release, h.comm);
    for (std::size_t i = 1; i < node.size() && err == MPI_SUCCESS; ++i)
        err = send0(node[i], tag_release, h.comm);
    return err;
}

} // namespace hashi::coll::algo
