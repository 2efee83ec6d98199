// SPDX-License-Identifier: BSD-3-Clause
// hashi-info: what this Hashi install is made of and what it can use, in
// the spirit of mpichversion and ompi_info. Versions are asked of the
// libraries themselves at run time, not copied from build time.
#include "common/install_paths.hpp"
#include "common/number_text.hpp"
#include "config.h"
#include "mpi/info/kernel_module.hpp"
#include "mpi/info/stats_summary.hpp"
#include "mpi/info/stats_watch.hpp"

#include <hwloc.h>
#include <mpi.h>
#include <rdma/fabric.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string read_file(const std::filesystem::path& p)
{
    std::ifstream in(p);
    if (!in) {
        return {};
    }
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string first_line(const std::string& text)
{
    return text.substr(0, text.find('\n'));
}

std::string mpich_base_version()
{
    std::array<char, MPI_MAX_LIBRARY_VERSION_STRING> buf {};
    int len = 0;
    // Allowed before MPI_Init, so hashi-info needs no job around it.
    MPI_Get_library_version(buf.data(), &len);
    // First line reads "MPICH Version:<tab>4.0.2".
    auto line = first_line(std::string(buf.data(), static_cast<size_t>(len)));
    auto colon = line.find(':');
    auto version = colon == std::string::npos ? line : line.substr(colon + 1);
    version.erase(0, version.find_first_not_of(" \t"));
    return version;
}

std::string version_string(uint32_t v)
{
    return std::to_string(FI_MAJOR(v)) + "." + std::to_string(FI_MINOR(v));
}

// Providers libfabric can offer RDM endpoints from, with Hashi's provider
// directory on the search path as mpiexec sets it.
std::vector<std::string> providers()
{
    fi_info* hints = fi_allocinfo();
    hints->ep_attr->type = FI_EP_RDM;
    fi_info* list = nullptr;
    std::set<std::string> names;
    if (fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &list) == 0) {
        for (fi_info* i = list; i != nullptr; i = i->next) {
            names.insert(i->fabric_attr->prov_name);
        }
        fi_freeinfo(list);
    }
    fi_freeinfo(hints);
    return {names.begin(), names.end()};
}

constexpr double default_watch_interval = 2; // as often as the ranks rewrite their files

void usage(std::ostream& out)
{
    out << "Usage: hashi-info [--all | --version | --providers | --configure | --stats DIR | --help]\n"
           "  (no option)   summary: versions, prefix, providers, kernel module\n"
           "  --all         also the configure flags of Hashi and of the MPICH base\n"
           "  --version     Hashi's version only\n"
           "  --providers   libfabric providers with RDM endpoints, one per line\n"
           "  --configure   configure flags of Hashi and of the MPICH base\n"
           "  --stats DIR   per-peer traffic of a job run with FI_HASHI_STATS_DIR=DIR, and the\n"
           "                trunks of impi-relays run with --stats-dir DIR\n"
           "  --tcp         with --stats: the kernel's view of each peer's TCP connections instead\n"
           "                (retransmissions, timeouts, lost segments, cwnd, srtt, pacing rate)\n"
           "  --watch       with --stats: a running job's figures and rates, refreshed in place\n"
           "  --interval SEC  with --watch: seconds between refreshes (default 2; 0.1 to 3600)\n"
           "  --count N     with --watch: stop after N refreshes (default: at Ctrl-C)\n";
}

} // namespace

int main(int argc, char** argv)
{
    bool all = false;
    bool only_version = false;
    bool only_providers = false;
    bool only_configure = false;
    std::optional<std::string> stats_dir;
    bool watch = false;
    bool tcp_view = false;
    bool interval_set = false;
    double interval = default_watch_interval;
    long count = 0;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--all" || a == "-a") {
            all = true;
        } else if (a == "--version" || a == "-version") {
            only_version = true;
        } else if (a == "--providers") {
            only_providers = true;
        } else if (a == "--stats") {
            if (i + 1 >= argc) {
                std::cerr << "hashi-info: --stats needs a directory (the job's FI_HASHI_STATS_DIR)\n";
                return 2;
            }
            stats_dir = argv[++i];
        } else if (a == "--watch") {
            watch = true;
        } else if (a == "--tcp") {
            tcp_view = true;
        } else if (a == "--interval" || a == "--count") {
            if (i + 1 >= argc) {
                std::cerr << "hashi-info: " << a << " needs a value\n";
                return 2;
            }
            std::string error;
            bool ok = false;
            if (a == "--interval") {
                auto v = hashi::parse_decimal(
                    "option --interval", argv[++i], {.lo = 0.1, .hi = 3600, .unit = "seconds"}, error);
                ok = v.has_value();
                interval_set = true;
                interval = v.value_or(interval);
            } else {
                auto v = hashi::parse_whole("option --count", argv[++i], {.lo = 1, .hi = 1000000000}, error);
                ok = v.has_value();
                count = static_cast<long>(v.value_or(0));
            }
            if (!ok) {
                std::cerr << "hashi-info: " << error << "\n";
                return 2;
            }
        } else if (a == "--configure") {
            only_configure = true;
        } else if (a == "--help" || a == "-h") {
            usage(std::cout);
            return 0;
        } else {
            std::cerr << "hashi-info: unknown option '" << a << "'\n";
            usage(std::cerr);
            return 2;
        }
    }
    if (!stats_dir && (watch || tcp_view || interval_set || count != 0)) {
        std::cerr << "hashi-info: --watch, --tcp, --interval and --count go with --stats DIR (hashi-info --stats DIR "
                     "--watch)\n";
        return 2;
    }
    if (stats_dir && !watch && (interval_set || count != 0)) {
        std::cerr << "hashi-info: --interval and --count go with --watch (hashi-info --stats DIR --watch)\n";
        return 2;
    }
    const auto view = tcp_view ? hashi::StatsView::tcp : hashi::StatsView::traffic;
    if (stats_dir && watch) {
        return hashi::watch_stats({.dir = *stats_dir,
                                      .interval_s = interval,
                                      .count = count,
                                      .in_place = ::isatty(STDOUT_FILENO) != 0,
                                      .view = view},
            std::cout, std::cerr);
    }
    if (stats_dir) {
        return hashi::print_stats_summary(*stats_dir, std::cout, std::cerr, view);
    }
    if (only_version) {
        std::cout << PACKAGE_VERSION << "\n";
        return 0;
    }

    auto paths = hashi::install_paths();
    // As mpiexec does, so the providers listed are those a job can use.
    ::setenv("FI_PROVIDER_PATH", hashi::provider_search_path(paths).c_str(), 1);

    if (only_providers) {
        for (const auto& p : providers()) {
            std::cout << p << "\n";
        }
        return 0;
    }
    auto mpich_flags = read_file(paths.pkgdatadir / "mpich-configure-flags");
    auto print_configure = [&] {
        std::cout << "Hashi configure:      " << HASHI_CONFIGURE_ARGS << "\n";
        std::cout << "MPICH base configure:";
        std::istringstream lines(mpich_flags);
        std::string l;
        while (std::getline(lines, l)) {
            std::cout << " " << l;
        }
        std::cout << "\n";
    };
    if (only_configure) {
        print_configure();
        return 0;
    }

    std::cout << "Hashi MPI:            " << PACKAGE_VERSION << "\n";
    std::cout << "Prefix:               " << paths.prefix.string() << "\n";
    auto debian_version = first_line(read_file(paths.pkgdatadir / "mpich-version"));
    std::cout << "MPICH base:           " << mpich_base_version() << " (ch4:ofi, from Debian's mpich source package"
              << (debian_version.empty() ? std::string() : " " + debian_version) << ")\n";
    std::cout << "MPI standard:         ";
    int major = 0;
    int minor = 0;
    MPI_Get_version(&major, &minor);
    std::cout << major << "." << minor << "\n";
    std::cout << "libfabric:            " << version_string(fi_version()) << " (API, run time), " << FI_MAJOR_VERSION
              << "." << FI_MINOR_VERSION << " (built against)\n";
    unsigned hv = hwloc_get_api_version();
    std::cout << "hwloc:                API " << (hv >> 16) << "." << ((hv >> 8) & 0xff) << "." << (hv & 0xff)
              << " (run time)\n";
    std::cout << "Compilers:            mpicc -> " << HASHI_WRAPPER_CC << ", mpicxx -> " << HASHI_WRAPPER_CXX
              << ", mpifort -> " << HASHI_WRAPPER_FC << "\n";
    std::cout << "Default provider:     " << HASHI_DEFAULT_PROVIDER
              << " (mpiexec -provider NAME or HASHI_PROVIDER to change)\n";
    std::cout << "Provider directory:   " << paths.providerdir.string() << "\n";
    std::cout << "Providers (RDM):     ";
    for (const auto& p : providers()) {
        std::cout << " " << p;
    }
    std::cout << "\n";
    hashi::print_kernel_module(std::cout);
    if (all) {
        print_configure();
    }
    return 0;
}
