// SPDX-License-Identifier: BSD-3-Clause
// mpiexec / mpirun: Hashi's process manager. Starts an MPI job and serves
// PMI-1 to it; see `mpiexec -help` and doc/user-guide.md.
#include "common/environment.hpp"
#include "common/install_paths.hpp"
#include "config.h"
#include "job.hpp"
#include "options.hpp"
#include "rank_binding.hpp"
#include "ssh_shim.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

using namespace hashi::mpiexec;

int main(int argc, char** argv)
{
    // Descriptors 0-2 must be open before any pipe is made, or a pipe could
    // land on them and be clobbered when a child sets up its stdio.
    for (int fd = 0; fd <= 2; ++fd) {
        if (::fcntl(fd, F_GETFD) < 0) {
            ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
        }
    }
    if (argc > 1 && std::string(argv[1]) == ssh_shim_flag) {
        return run_ssh_shim(argc, argv);
    }
    if (argc > 1 && std::string(argv[1]) == exec_binder_flag) {
        return run_exec_binder(argc, argv);
    }
    std::vector<std::string> args(argv + 1, argv + argc);
    Options opt;
    try {
        opt = parse_options(args, hashi::env_value, HASHI_DEFAULT_PROVIDER);
    } catch (const UsageError& e) {
        std::cerr << "mpiexec: error: " << e.what() << std::endl;
        return 2;
    }
    if (opt.help) {
        std::cout << usage_text();
        return 0;
    }
    auto paths = hashi::install_paths();
    if (opt.version) {
        std::cout << "mpiexec (Hashi MPI) " << PACKAGE_VERSION << "\n"
                  << "PMI: PMI-1 (MPICH simple wire protocol)\n"
                  << "Default libfabric provider: " << HASHI_DEFAULT_PROVIDER << "\n"
                  << "Prefix: " << paths.prefix.string() << "\n"
                  << "Run hashi-info for the versions of the MPICH base and libfabric.\n";
        return 0;
    }

    // What every process of the job gets: the provider choice and where
    // Hashi's own DL providers live. The user's -genv/-env still win.
    std::vector<EnvVar> job_vars = {{"FI_PROVIDER", opt.provider}};
    // Debian's libfabric links the PSM (InfiniPath) library, whose load-time
    // constructor turns SIGSEGV, SIGBUS, SIGABRT, SIGINT and SIGTERM into
    // exit(1) and drops .btr files in the working directory. That hides how
    // a rank died from mpiexec, so it is switched off unless the user asks.
    job_vars.emplace_back("IPATH_NO_BACKTRACE", "1");
    std::error_code ec;
    if (std::filesystem::is_directory(paths.providerdir, ec)) {
        job_vars.emplace_back("FI_PROVIDER_PATH", hashi::provider_search_path(paths));
    }
    job_vars.emplace_back("HASHI_PREFIX", paths.prefix.string());

    try {
        Job job(std::move(opt), std::move(job_vars));
        return job.run();
    } catch (const UsageError& e) {
        std::cerr << "mpiexec: error: " << e.what() << std::endl;
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "mpiexec: error: " << e.what() << std::endl;
        return 1;
    }
}
