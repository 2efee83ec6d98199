// SPDX-License-Identifier: BSD-3-Clause
// How one process is started: the argv mpiexec executes for it under each
// launcher (fork: the program itself; exec: a template such as
// "ip netns exec {host}" in front of it; ssh: ssh to the host with a shell
// command line; slurm: an srun step of one task on the host), and the
// environment it gets.
#pragma once

#include "options.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace hashi::mpiexec {

// Splits a launcher template into words, honouring single and double
// quotes and backslash escapes. Throws UsageError on an unbalanced quote.
std::vector<std::string> split_words(std::string_view text);

// Quotes `word` for a POSIX shell.
std::string shell_quote(std::string_view word);

struct LaunchTarget {
    std::string host;
    int rank = 0;
};

// The argv to execute. For ssh, `wdir` is folded into the remote command
// line (for slurm it is srun's --chdir); the environment is not (a command line is visible to every user in
// ps on both hosts): the ssh shim gets it on stdin (shim_handoff.hpp). For
// fork and exec the caller passes both through execve and chdir.
std::vector<std::string> launch_argv(const Options& opt, const LaunchTarget& target,
    const std::vector<std::string>& program_argv, const std::string& wdir);

// The environment of one process: mpiexec's own as `policy` allows (all,
// none, or the -genvlist names), then `job_vars` (provider, Hashi's
// variables), then -genv, then the segment's -env, then `pmi_vars`, which
// nothing may override. Later entries replace earlier ones of one name.
// The IMPI credentials (HASHI_IMPI_SECRET, HASHI_IMPI_SECRET_FILE,
// IMPI_AUTH_KEY) are never passed on, from any source: ranks do not need
// them, and a rank's environment is not the place for the job's secret.
std::vector<EnvVar> process_environment(const Options& opt, EnvPolicy policy, const AppSegment& app,
    const std::vector<EnvVar>& inherited, const std::vector<EnvVar>& job_vars, const std::vector<EnvVar>& pmi_vars);

} // namespace hashi::mpiexec
