// SPDX-License-Identifier: BSD-3-Clause
// One MPI job: starts every process, serves PMI to them, forwards stdin and
// output, propagates signals, and when a process fails kills the others and
// says which rank failed and how.
#pragma once

#include "binding_plan.hpp"
#include "common/unique_fd.hpp"
#include "impi_client.hpp"
#include "options.hpp"
#include "output_forwarder.hpp"
#include "placement.hpp"
#include "pmi_server.hpp"
#include "secrets.hpp"

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace hashi::mpiexec {

class Job {
public:
    // `job_vars` are the variables every process gets (provider choice,
    // Hashi's own); see process_environment for the precedence.
    Job(Options opt, std::vector<EnvVar> job_vars);
    Job(const Job&) = delete;
    Job& operator=(const Job&) = delete;
    ~Job();

    // Runs the job to the end and returns mpiexec's exit status.
    int run();

private:
    struct PmiConnection {
        UniqueFd fd;
        int rank = -1; // -1 until a TCP connection identifies itself
        bool lifeline = false; // an ssh shim's lifeline rather than PMI
        std::string inbuf;
        // TCP connections not yet authenticated are closed at this time.
        std::chrono::steady_clock::time_point auth_deadline {};
        std::string peer; // address:port, for messages
    };
    struct Process {
        int rank = 0;
        std::string host;
        pid_t pid = -1;
        bool exited = false;
        int wait_status = 0;
        // ssh launcher: how the program ended, as its shim reported it
        // (the ssh client's own status says only "255").
        bool remote_reported = false;
        int remote_status = 0;
        int remote_signal = 0;
        // ssh launcher: what the rank's shim proves on the PMI port.
        Secret token {};
        UniqueFd stdin_fd; // rank 0 only
        UniqueFd stdout_fd;
        UniqueFd stderr_fd;
        std::unique_ptr<OutputForwarder> out;
        std::unique_ptr<OutputForwarder> err;
    };

    void start_all();
    // Federated job: joins impi-server and takes the global view (ranks,
    // nodes, job id); otherwise makes this cluster the whole job. False
    // when a signal cut the startup short (status_ is then set).
    bool join_federation();
    void on_impi_readable();
    void on_local_barrier_complete();
    // Tells impi-server how the cluster's part ended (FINI or abort).
    void leave_federation();
    void start_one(int rank, const AppSegment& app, int app_index);
    void event_loop();
    void handle_signals();
    void reap_children();
    void on_process_exit(Process& p);
    void on_pmi_readable(PmiConnection& c);
    void on_pmi_line(PmiConnection& c, std::string_view line);
    void on_identify(PmiConnection& c, std::string_view line);
    void on_lifeline_line(PmiConnection& c, std::string_view line);
    void drain_lifeline(int rank);
    void accept_pmi_connection();
    // A connection to the PMI port that failed to authenticate: closed,
    // and said so at most once every few seconds (a stranger must not be
    // able to flood our stderr).
    void refuse_pmi(PmiConnection& c, const std::string& why);
    void expire_unauthenticated();
    void close_pmi(PmiConnection& c);
    void send_pmi(int rank, const std::string& line);
    void forward_stdin();
    // First failure wins: records the status and message, then kills the
    // rest. `culprit` is the failing rank, if any.
    void fail(int exit_status, const std::string& message, int culprit = -1);
    void kill_all(int sig);
    [[nodiscard]] bool all_exited() const;
    [[nodiscard]] int live_count() const;
    [[nodiscard]] std::string describe(const Process& p) const;

    Options opt_;
    std::vector<EnvVar> job_vars_;
    std::vector<EnvVar> inherited_env_;
    Placement placement_;
    // fork launcher with -bind-to: the bindings of this node, where every
    // rank runs (other launchers bind on the rank's node, rank_binding.hpp).
    std::optional<BindingPlan> local_bindings_;
    std::unique_ptr<PmiServer> pmi_;
    std::unique_ptr<ImpiClient> impi_; // federated jobs only
    int global_size_ = 0; // ranks of the whole job, every cluster
    int rank_offset_ = 0; // global rank of procs_[0]
    int cluster_id_ = 0;
    std::string job_id_; // HASHI_JOB_ID: 16 hex digits
    std::string relays_; // HASHI_RELAYS: this cluster's impi-relays, empty when it has none
    Secret job_key_ {}; // HASHI_JOB_KEY: the ranks authenticate each other with it
    std::vector<int> global_node_of_rank_;
    bool barrier_pending_ = false; // this cluster's barrier is at the server
    std::vector<Process> procs_;
    std::unordered_map<pid_t, int> rank_of_pid_;
    std::vector<std::unique_ptr<PmiConnection>> pmi_conns_;
    std::vector<PmiConnection*> pmi_of_rank_;
    std::vector<PmiConnection*> lifeline_of_rank_;
    std::string shim_exe_; // this mpiexec, run remotely as the ssh shim
    UniqueFd pmi_listener_; // ssh launcher: processes connect back over TCP
    std::string pmi_port_; // host:port of pmi_listener_
    std::chrono::steady_clock::time_point refusal_logged_ {};
    int refusals_unlogged_ = 0;
    UniqueFd signal_fd_;
    bool stdin_open_ = false;
    std::string stdin_buf_;

    std::optional<int> status_; // set by the first failure
    bool killing_ = false;
    int user_signals_ = 0;
    std::chrono::steady_clock::time_point kill_deadline_ {};
    std::chrono::steady_clock::time_point timeout_deadline_ {};
    std::chrono::steady_clock::time_point drain_deadline_ {};
};

} // namespace hashi::mpiexec
