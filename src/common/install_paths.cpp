// SPDX-License-Identifier: BSD-3-Clause
#include "common/install_paths.hpp"

#include "common/environment.hpp"

#include <system_error>

namespace hashi {

InstallPaths install_paths_at(const std::filesystem::path& prefix)
{
    InstallPaths p;
    p.prefix = prefix;
    p.bindir = prefix / "bin";
    p.libdir = prefix / "lib";
    p.includedir = prefix / "include";
    p.pkgdatadir = prefix / "share" / "hashi";
    p.providerdir = prefix / "lib" / "hashi" / "fi";
    return p;
}

std::string provider_search_path(const InstallPaths& paths)
{
    std::string path = paths.providerdir.string();
    if (auto old = env_text("FI_PROVIDER_PATH")) {
        path += ":" + *old;
    }
    return path;
}

InstallPaths install_paths()
{
    if (auto env = env_text("HASHI_PREFIX")) {
        return install_paths_at(*env);
    }
    std::error_code ec;
    // /proc/self/exe resolves symlinks (mpirun -> mpiexec, mpif90 -> mpifort),
    // which is what we want: the real binary sits in <prefix>/bin.
    auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) {
        return install_paths_at("/usr/local");
    }
    return install_paths_at(exe.parent_path().parent_path());
}

} // namespace hashi
