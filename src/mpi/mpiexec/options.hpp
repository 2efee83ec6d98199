// SPDX-License-Identifier: BSD-3-Clause
// mpiexec's command line, parsed into a plan with no side effects so every
// error case can be unit-tested. Flags follow MPICH Hydra's spelling where
// Hydra has one.
#pragma once

#include "binding_spec.hpp"
#include "hostfile.hpp"

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hashi::mpiexec {

using EnvVar = std::pair<std::string, std::string>;

// One executable and its processes: `-n 2 ./a : -n 3 ./b` has two segments.
struct AppSegment {
    int nprocs = 0; // 0: not given on the command line
    std::vector<std::string> argv; // program and its arguments
    std::vector<EnvVar> env; // -env K V, this segment only
    std::optional<std::string> wdir;
};

// slurm: one srun step per process inside a Slurm allocation, through the
// same shim as ssh (ssh_shim.hpp).
enum class LauncherKind { fork, ssh, exec, slurm };

// Whether processes start through the shim on their node and reach
// mpiexec's PMI port over TCP (ssh, slurm), not through an inherited socket.
inline bool starts_through_shim(LauncherKind k)
{
    return k == LauncherKind::ssh || k == LauncherKind::slurm;
}

// -client K addr:port: this mpiexec runs cluster K's part of a job that
// spans clusters, joined through impi-server (relay/README.md). The
// credentials are resolved (flags, then environment, then files) when the
// job starts, not here, so parsing stays free of side effects.
struct FederationOptions {
    int client = -1; // -1: an ordinary job of this cluster alone
    std::string server; // addr:port as impi-server printed it
    std::optional<std::string> secret; // -impi-secret
    std::optional<std::string> secret_file; // -impi-secret-file
    std::optional<std::string> key; // -impi-key
    bool enable_key = false; // -impi-auth-key
    bool enable_none = false; // -impi-auth-none
    int timeout_seconds = 60; // -impi-timeout, HASHI_IMPI_TIMEOUT

    [[nodiscard]] bool active() const { return client >= 0; }
};
enum class EnvPolicy { all, none, list };

struct Options {
    std::vector<AppSegment> apps;
    std::vector<HostSlots> hosts; // empty: every process on this host
    int ppn = 0; // processes per node; 0: fill each host's slots
    std::vector<EnvVar> genv; // -genv K V
    EnvPolicy env_policy = EnvPolicy::all;
    std::vector<std::string> env_list; // -genvlist a,b
    std::optional<std::string> gwdir;
    LauncherKind launcher = LauncherKind::fork;
    std::string launcher_exec; // template for exec, command for ssh and slurm (srun)
    bool prepend_rank = false;
    bool verbose = false;
    bool oversubscribe = false; // -oversubscribe: no limit of processes per CPU
    BindingSpec binding; // -bind-to, -map-by (rank_binding.hpp applies it)
    bool print_bindings = false; // -print-bindings
    std::string provider; // libfabric provider for the job
    int timeout_seconds = 0; // 0: none
    FederationOptions federation;
    bool help = false;
    bool version = false;

    [[nodiscard]] int total_procs() const;
};

class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Looks up an environment variable; tests pass their own.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// Parses argv (without argv[0]). Reads hostfiles from disk. Environment
// defaults: HASHI_PROVIDER (then FI_PROVIDER), MPIEXEC_TIMEOUT,
// HASHI_LAUNCHER, HASHI_LAUNCHER_EXEC, HASHI_HOSTFILE, HASHI_IMPI_TIMEOUT;
// inside a Slurm allocation (SLURM_JOB_ID) with no hosts and no launcher
// given, the slurm launcher with SLURM_JOB_NODELIST and SLURM_TASKS_PER_NODE.
// Throws UsageError
// saying what was wrong and what to do.
Options parse_options(const std::vector<std::string>& args, const EnvLookup& env, std::string_view default_provider);

// The text printed by -help.
std::string usage_text();

} // namespace hashi::mpiexec
