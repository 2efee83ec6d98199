// SPDX-License-Identifier: BSD-3-Clause
// The o2g module's state for hashi-info (kernel_module.hpp).
#include "mpi/info/kernel_module.hpp"

#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace hashi {

namespace {

namespace fs = std::filesystem;

std::string first_line_of(const fs::path& p)
{
    std::ifstream in(p);
    std::string l;
    std::getline(in, l);
    return l;
}

// "name=value" for every file of a sysfs directory, in name order.
std::string name_values(const fs::path& dir)
{
    std::error_code ec;
    std::map<std::string, std::string> values;
    for (const auto& e : fs::directory_iterator(dir, ec))
        values[e.path().filename().string()] = first_line_of(e.path());
    std::string out;
    for (const auto& [name, value] : values)
        out += (out.empty() ? "" : " ") + name + "=" + value;
    return out.empty() ? "(none readable)" : out;
}

} // namespace

void print_kernel_module(std::ostream& out)
{
    std::error_code ec;
    out << "Kernel module:        ";
    if (!fs::exists("/sys/module/o2g", ec)) {
        out << "o2g not loaded (the user-space receive path is used)\n";
        return;
    }
    const auto v = first_line_of("/sys/module/o2g/version");
    out << "o2g loaded" << (v.empty() ? std::string() : " (version " + v + ")")
        << (fs::exists("/dev/o2g", ec) ? ", /dev/o2g present" : ", /dev/o2g missing")
        << " (FI_HASHI_RECV=auto receives through it)\n";
    out << "  parameters:         " << name_values("/sys/module/o2g/parameters") << "\n";
    out << "  counters:           " << name_values("/sys/class/misc/o2g/counters") << "\n";
    // The module charges its pins to RLIMIT_MEMLOCK: what a process started
    // from here may pin (FI_HASHI_RECV=auto wants room for max_posted
    // receives of 1 MiB, kmod/README.md).
    rlimit l {};
    out << "  pin limit here:     ";
    if (::getrlimit(RLIMIT_MEMLOCK, &l) != 0)
        out << "RLIMIT_MEMLOCK unreadable\n";
    else if (l.rlim_cur == RLIM_INFINITY)
        out << "unlimited (RLIMIT_MEMLOCK)\n";
    else
        out << (l.rlim_cur >> 10) << " KiB (RLIMIT_MEMLOCK; without CAP_IPC_LOCK the module pins no more; "
            << "ulimit -l unlimited lifts it)\n";
}

} // namespace hashi
