// SPDX-License-Identifier: BSD-3-Clause
// Where an installed Hashi lives, found from the running executable rather
// than compiled in, so an install tree can be moved (or staged with DESTDIR
// for the test suite) and still find its own libraries and headers.
#pragma once

#include <filesystem>
#include <string>

namespace hashi {

struct InstallPaths {
    std::filesystem::path prefix; // <prefix>
    std::filesystem::path bindir; // <prefix>/bin
    std::filesystem::path libdir; // <prefix>/lib
    std::filesystem::path includedir; // <prefix>/include
    std::filesystem::path pkgdatadir; // <prefix>/share/hashi
    std::filesystem::path providerdir; // <prefix>/lib/hashi/fi: DL libfabric providers
};

// Paths of the install tree that holds the running executable
// (<prefix>/bin/<exe>). HASHI_PREFIX in the environment overrides.
InstallPaths install_paths();

// Paths of an install tree rooted at `prefix`.
InstallPaths install_paths_at(const std::filesystem::path& prefix);

// FI_PROVIDER_PATH for what this tree starts: its own providers first, so
// libfabric finds `hashi`, then whatever FI_PROVIDER_PATH already said.
std::string provider_search_path(const InstallPaths& paths);

} // namespace hashi
