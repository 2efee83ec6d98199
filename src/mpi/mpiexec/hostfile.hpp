// SPDX-License-Identifier: BSD-3-Clause
// Host lists: `-hosts a,b:4` on the command line and hostfiles given with
// `-f`. A hostfile line is `host`, `host:slots` (MPICH Hydra style) or
// `host slots=N` (Open MPI style); `#` starts a comment.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace hashi::mpiexec {

struct HostSlots {
    std::string name;
    int slots = 1;
    bool operator==(const HostSlots&) const = default;
};

class HostListError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Parses "a,b:2,c". Throws HostListError naming the bad entry.
std::vector<HostSlots> parse_host_list(std::string_view list);

// Parses hostfile text. `origin` (usually the file name) prefixes error
// messages as "origin:line: ...". Throws HostListError.
std::vector<HostSlots> parse_hostfile(std::string_view text, std::string_view origin);

// Reads and parses a hostfile from disk. Throws HostListError if unreadable.
std::vector<HostSlots> read_hostfile(const std::string& path);

} // namespace hashi::mpiexec
