// SPDX-License-Identifier: BSD-3-Clause
// The PMI-1 service mpiexec gives its processes: key-value space, barrier,
// name publishing, abort. A pure state machine: it takes one line from one
// rank and returns the lines to send and what the job should do, so it is
// tested without processes and reused unchanged when ranks come from other
// clusters.
#pragma once

#include "pmi_wire.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace hashi::mpiexec {

struct PmiJobInfo {
    int size = 1; // processes this server serves (a federated job's other clusters have their own)
    int universe_size = 1;
    std::string kvsname = "hashi_kvs";
    std::string process_mapping; // value of the PMI_process_mapping key
    std::vector<int> appnum; // per rank: index of its program (MPMD)
    // Federated job: when every local rank is in the barrier, the caller
    // makes it global (take_new_entries, then release_barrier) instead of
    // the server answering at once.
    bool global_barrier = false;
};

using KeyValue = std::pair<std::string, std::string>;

class PmiServer {
public:
    explicit PmiServer(PmiJobInfo info);

    struct Reply {
        int rank;
        std::string line;
    };
    struct Result {
        std::vector<Reply> replies;
        std::optional<int> abort_code; // the rank asked to abort the job with this code
        std::string error; // non-empty: protocol violation, close the connection
        bool barrier_complete = false; // global_barrier: every local rank waits in the barrier
    };

    // Handles one line received from `rank`.
    Result handle(int rank, std::string_view line);

    [[nodiscard]] bool initialized(int rank) const { return initialized_.contains(rank); }
    [[nodiscard]] bool finalized(int rank) const { return finalized_.contains(rank); }
    [[nodiscard]] int barrier_waiting() const { return static_cast<int>(in_barrier_.size()); }
    [[nodiscard]] const PmiJobInfo& info() const { return info_; }

    // The entries put since the previous barrier, in the order first put
    // (what other clusters need); clears the list.
    std::vector<KeyValue> take_new_entries();
    // Ends a global barrier: stores the other clusters' entries and returns
    // the barrier_out lines for every waiting rank.
    std::vector<Reply> release_barrier(const std::vector<KeyValue>& remote_entries);

private:
    Result handle_message(int rank, const pmi::Message& msg);

    PmiJobInfo info_;
    std::map<std::string, std::string, std::less<>> kvs_;
    std::map<std::string, std::string, std::less<>> published_;
    std::set<int> in_barrier_;
    std::vector<std::string> new_keys_; // put since the last barrier, first-put order
    std::set<std::string, std::less<>> new_key_set_;
    std::set<int> initialized_;
    std::set<int> finalized_;
    std::set<int> in_multiline_; // ranks sending an mcmd=... block we skip
};

} // namespace hashi::mpiexec
