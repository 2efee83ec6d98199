// SPDX-License-Identifier: BSD-3-Clause
// PMI-1 wire format as MPICH's "simple" PMI client speaks it: one line per
// message, "cmd=NAME key=value key=value\n", at most 1024 bytes, values
// without spaces. Nothing else in mpiexec knows these bytes.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hashi::mpiexec::pmi {

// MPICH's PMIU_MAXLINE: the client reads at most this many bytes per line.
constexpr size_t max_line = 1024;

// Limits we announce in the get_maxes answer. The client clamps
// vallen_max to fit "cmd=put kvsname= key= value=" into max_line.
constexpr size_t kvsname_max = 256;
constexpr size_t keylen_max = 64;
constexpr size_t vallen_max = 1024;

struct Message {
    std::string cmd;
    std::vector<std::pair<std::string, std::string>> fields; // in wire order, "cmd" excluded

    [[nodiscard]] std::optional<std::string> get(std::string_view key) const;
};

// Parses one line (with or without its trailing '\n'). Returns nullopt and
// sets `error` when the line is not a PMI-1 message.
std::optional<Message> parse(std::string_view line, std::string& error);

// Formats "cmd=NAME k=v ...\n".
std::string format(std::string_view cmd, const std::vector<std::pair<std::string, std::string>>& fields = {});

} // namespace hashi::mpiexec::pmi
