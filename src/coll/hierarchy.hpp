// SPDX-License-Identifier: BSD-3-Clause
// The three-level view of a communicator that every Hashi collective works
// on: clusters (joined by the WAN), nodes (shared memory) inside them, and
// ranks. Built once per communicator from MPI_Comm_split_type(SHARED) and
// the cluster id Hashi's mpiexec gives each rank (HASHI_CLUSTER_ID), and
// cached on the communicator as an attribute (see hierarchy.cpp).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace hashi::coll {

struct Hierarchy {
    // A private duplicate of the user's communicator. All of our traffic
    // goes over it, so our point-to-point messages can never match the
    // user's, whatever tags they use.
    MPI_Comm comm = MPI_COMM_NULL;
    // A second duplicate for the nonblocking collectives, whose messages
    // are posted while blocking ones may run on `comm` (nonblocking.cpp).
    MPI_Comm nb_comm = MPI_COMM_NULL;
    // Nonblocking collectives started on this communicator so far: every
    // rank starts them in the same order, so this numbers them alike
    // everywhere and gives each its own tag.
    mutable unsigned nb_started = 0;
    int rank = 0;
    int size = 1;

    // Clusters are numbered 0..nclusters-1 in the order of their cluster
    // ids. Clusters may be of any size (a communicator can split them
    // unevenly), and their ranks need not be contiguous in `comm`.
    int nclusters = 1;
    std::vector<int> cluster_of; // comm rank -> cluster index
    std::vector<std::vector<int>> members; // cluster index -> comm ranks, ascending
    int my_cluster = 0;
    int cluster_rank = 0; // my index in members[my_cluster]
    // The ranks of my cluster, rank i of it being members[my_cluster][i].
    MPI_Comm cluster_comm = MPI_COMM_NULL;

    // Nodes are numbered 0..nnodes-1 over the whole communicator; a node
    // belongs to exactly one cluster.
    int nnodes = 1;
    std::vector<int> node_of; // comm rank -> node index
    MPI_Comm node_comm = MPI_COMM_NULL; // the ranks of my node
    int node_rank = 0;

    // Lanes: each cluster's ranks reordered so that consecutive lanes sit
    // on different nodes (the first rank of every node, then the second of
    // every node, ...). A WAN algorithm that runs L parallel WAN flows uses
    // lanes 0..L-1 of every cluster: lane j of one cluster talks to lane j
    // of another, and each flow leaves from a different node's NIC while
    // L does not exceed the cluster's node count.
    std::vector<std::vector<int>> lanes; // cluster index -> comm ranks in lane order
    int my_lane = 0; // my position in lanes[my_cluster]
    int min_cluster_size = 1;
    int max_cluster_size = 1;

    int cluster_size(int c) const { return static_cast<int>(members[c].size()); }
    int my_cluster_size() const { return cluster_size(my_cluster); }
    // Index of comm rank r inside its cluster (position in members[]).
    std::vector<int> index_in_cluster; // comm rank -> index in members[cluster_of[r]]
    std::vector<int> lane_of; // comm rank -> position in lanes[cluster_of[r]]

    // The selector's decisions on this communicator, by collective and
    // size class, so the cost model runs once per (collective, size class):
    // the algorithm, and the WAN senders per cluster it was costed with
    // when the model picked them (0: the job's, Tuning::wan_senders).
    struct Decision {
        std::string algorithm;
        int lanes = 0;
    };
    mutable std::map<std::uint64_t, Decision> choices;
};

// The hierarchy of `comm`, built on first use (collective over `comm`) and
// cached until the communicator is freed. Returns nullptr for
// communicators we do not handle (inter-communicators); the caller then
// hands the call to MPICH.
const Hierarchy* hierarchy_of(MPI_Comm comm);

// The hierarchy of `comm` if an earlier collective built it, else nullptr;
// never communicates. Whether it exists is the same on every rank (they
// all made the same collective calls on `comm` before), so nonblocking
// collectives can use it to decide alike without a blocking exchange.
const Hierarchy* cached_hierarchy_of(MPI_Comm comm);

// A running nonblocking collective pins the hierarchy it uses: if the user
// frees the communicator meanwhile (MPI allows it with operations pending),
// our sub-communicators are freed only when the last pin is released.
void pin_hierarchy(const Hierarchy* h);
void unpin_hierarchy(const Hierarchy* h);

// The cluster id of this process: HASHI_CLUSTER_ID, set by Hashi's mpiexec
// for each rank (0 when unset). Exits with a clear message when the
// variable is set to something that is not a non-negative integer.
int my_cluster_id();

} // namespace hashi::coll

namespace hashi::coll {
// Fills in the members, nodes and lanes of `h` from h.rank, h.size,
// h.nclusters, h.cluster_of and the lowest comm rank on each rank's node
// (node_leader). Split out of the collective construction for unit tests.
void derive_layout(Hierarchy& h, const std::vector<int>& node_leader);

// Drops the cached hierarchy of `comm` (MPI_Finalize does this for
// MPI_COMM_WORLD and MPI_COMM_SELF before MPICH tears them down).
void forget_hierarchy(MPI_Comm comm);
} // namespace hashi::coll
