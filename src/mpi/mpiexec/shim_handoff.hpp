// SPDX-License-Identifier: BSD-3-Clause
// What mpiexec hands an ssh-launched rank's shim on ssh's stdin before
// anything else: the rank's environment (which includes HASHI_JOB_KEY and
// the PMI variables) and its PMI-port token. ssh carries stdin encrypted,
// and unlike a command line it is not visible in `ps` on either host.
//
//   hashi-shim v1\n
//   token <64 hex>\n
//   env <length>\n<NAME=value bytes>\n      (any number)
//   end\n
//
// The shim reads exactly up to "end\n", so whatever follows (rank 0's
// share of mpiexec's stdin) is left for the program.
#pragma once

#include "options.hpp"
#include "secrets.hpp"

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace hashi::mpiexec {

struct ShimHandoff {
    Secret token {};
    std::vector<EnvVar> env;
};

// Bounds a reader enforces, so a confused or hostile writer cannot make the
// shim allocate without limit.
constexpr std::size_t handoff_max_entry = 256 * 1024;
constexpr std::size_t handoff_max_total = 4 * 1024 * 1024;

std::string encode_handoff(const ShimHandoff& h);

// Reads exactly `n` bytes into `buf`; false at end of input or on error.
using ReadExact = std::function<bool(char* buf, std::size_t n)>;

// Decodes a handoff from `read`, never reading past its "end" line.
// nullopt with `why` set when the input is not a well-formed handoff.
std::optional<ShimHandoff> decode_handoff(const ReadExact& read, std::string& why);

// A ReadExact over a descriptor (retries short reads and EINTR).
ReadExact fd_reader(int fd);

} // namespace hashi::mpiexec
