// SPDX-License-Identifier: BSD-3-Clause
#include "capacity.hpp"

namespace hashi::mpiexec {

int descriptors_per_process(LauncherKind launcher)
{
    // stdout and stderr pipes; a socket pair for PMI, or for ssh the
    // lifeline and the PMI connection of the shim.
    return starts_through_shim(launcher) ? 4 : 3;
}

rlimit raise_descriptor_limit()
{
    rlimit r {};
    if (::getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
        rlimit raised = r;
        raised.rlim_cur = r.rlim_max;
        if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) {
            r = raised;
        }
    }
    return r;
}

std::optional<std::string> capacity_problem(const Options& opt, int nprocs, long cpus, const rlimit& fds)
{
    // ssh runs the programs elsewhere; fork and exec (namespaces) run them
    // on this machine's CPUs.
    if (!starts_through_shim(opt.launcher) && !opt.oversubscribe && cpus > 0 && nprocs > max_procs_per_cpu * cpus) {
        return std::to_string(nprocs) + " processes on this machine are far more than its " + std::to_string(cpus) +
            " CPU" + (cpus == 1 ? "" : "s") + " can run (more than " + std::to_string(max_procs_per_cpu) +
            " per CPU); nothing was started. To start them anyway add -oversubscribe; to use other hosts give "
            "-hosts with -launcher ssh";
    }
    const long per = descriptors_per_process(opt.launcher);
    const long need = descriptor_reserve + per * static_cast<long>(nprocs);
    if (fds.rlim_cur != RLIM_INFINITY && static_cast<rlim_t>(need) > fds.rlim_cur) {
        std::string hard = fds.rlim_max == RLIM_INFINITY ? "unlimited" : std::to_string(fds.rlim_max);
        return std::to_string(nprocs) + " processes need about " + std::to_string(need) + " open files in mpiexec (" +
            std::to_string(per) + " per process), more than its limit of " + std::to_string(fds.rlim_cur) +
            " (hard limit " + hard + "); nothing was started. Start fewer processes, or raise the limit (ulimit -n, "
            "or the hard limit in /etc/security/limits.conf)";
    }
    return std::nullopt;
}

} // namespace hashi::mpiexec
