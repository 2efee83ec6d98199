// SPDX-License-Identifier: BSD-3-Clause
// Binding applied where a rank runs. The binding must come from the
// topology of the node the rank runs on, so it is computed by the process
// that execs the rank there:
//  - fork launcher: mpiexec itself (the rank's node is this one), in the
//    child between fork and exec;
//  - exec launcher: `mpiexec --hashi-bind REQUEST -- program args` inserted
//    after the template (run_exec_binder), which binds itself and execs the
//    program, so the rank keeps the pid the launcher gave it;
//  - ssh launcher: the ssh shim (ssh_shim.hpp), before it starts the program.
// REQUEST is a few words on the command line (the -bind-to and -map-by
// texts, the rank's index on its node, and whether to report), so -v shows
// them with the rest of the launch command.
#pragma once

#include "binding_plan.hpp"
#include "binding_spec.hpp"

#include <optional>
#include <sched.h>
#include <string>
#include <vector>

namespace hashi::mpiexec {

inline constexpr const char* exec_binder_flag = "--hashi-bind";

struct BindRequest {
    std::string bind_to; // -bind-to's text, empty for none
    std::string map_by; // -map-by's text, empty when not given
    int local_index = 0; // among the ranks mpiexec starts on this node
    int rank = 0; // MPI rank, for messages
    std::string host; // the host name mpiexec knows the node by
    bool report = false; // print the binding on stderr (-print-bindings, -v)
};

// The words that carry `req` on a command line, and back. parse_bind_request
// reads args[pos...] up to "--" (consumed) and sets `pos` past it; nullopt
// with `error` set when they are not what bind_request_args writes.
std::vector<std::string> bind_request_args(const BindRequest& req);
std::optional<BindRequest> parse_bind_request(const std::vector<std::string>& args, size_t& pos, std::string& error);

// A CPU set built beforehand, so applying it after fork is one system call
// (async-signal-safe).
class AffinityMask {
public:
    explicit AffinityMask(const std::vector<unsigned>& cpus);
    AffinityMask(const AffinityMask&) = delete;
    AffinityMask& operator=(const AffinityMask&) = delete;
    ~AffinityMask();
    // Binds the calling process (thread); false with errno set on failure.
    [[nodiscard]] bool apply() const noexcept;

private:
    cpu_set_t* set_ = nullptr;
    size_t size_ = 0;
};

// The CPUs the calling thread may run on now (sched_getaffinity).
std::vector<unsigned> current_affinity();

// The line -print-bindings prints for one rank: "mpiexec: rank 3 on node7
// bound to cpus 2-3 (core 1; -bind-to core)" or "... not bound, may run on
// cpus 0-3 (-bind-to none)".
std::string binding_report(const BindRequest& req, const std::optional<CpuBinding>& binding);

// Where the rank runs: loads this node's topology, binds the calling
// process as `req` asks and returns the report line (empty unless
// req.report). Throws BindingError naming the rank, the host and the problem.
std::string bind_this_process(const BindRequest& req);

// bind_this_process for the shims: prints the report line, or the reason
// on stderr and returns false (the shim then exits with status 2).
bool bind_this_process_or_say_why(const BindRequest& req);

// mpiexec --hashi-bind REQUEST -- program args: binds, then execs the
// program. Returns (only on failure) the exit status for main().
int run_exec_binder(int argc, char** argv);

} // namespace hashi::mpiexec
