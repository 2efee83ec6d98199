// SPDX-License-Identifier: BSD-3-Clause
// Whether a job can run at all, decided before anything starts: a job that
// runs out of descriptors half-way (mpiexec -n 100000 started 6,662
// processes, then had to kill them all) or that asks for far more
// processes than this machine has CPUs is refused with what to do instead.
#pragma once

#include "options.hpp"

#include <optional>
#include <string>
#include <sys/resource.h>

namespace hashi::mpiexec {

// Without -oversubscribe, at most this many processes per CPU on this
// machine (oversubscription itself is normal: tests run 8 ranks on 2 cores).
constexpr long max_procs_per_cpu = 64;

// Descriptors mpiexec holds for each process it starts (output pipes and
// PMI connections), and what it needs besides them.
int descriptors_per_process(LauncherKind launcher);
constexpr long descriptor_reserve = 64;

// Raises the soft RLIMIT_NOFILE to the hard one (the usual limit of 1024
// is far below what a big job needs) and returns both.
rlimit raise_descriptor_limit();

// Why `nprocs` processes started by this mpiexec cannot run, or nullopt.
// `cpus` is this machine's CPU count, `fds` the descriptor limit.
std::optional<std::string> capacity_problem(const Options& opt, int nprocs, long cpus, const rlimit& fds);

} // namespace hashi::mpiexec
