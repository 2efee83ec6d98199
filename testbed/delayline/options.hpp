// SPDX-License-Identifier: BSD-3-Clause
// Command line of hashi-delayline: two (namespace, tap name) ends and the
// one-way delay applied in each direction.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace hashi::delayline {

// A bad command line; main prints it with the usage and exits 2.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct TapEnd {
    std::string netns; // a name under /run/netns, or an absolute path
    std::string ifname;
    [[nodiscard]] std::string describe() const { return netns + "/" + ifname; }
};

struct Options {
    TapEnd a;
    TapEnd b;
    std::chrono::nanoseconds delay {};
    std::size_t queue_bytes = std::size_t {32} << 20;
    bool realtime = false; // SCHED_FIFO, for steadier delays on a busy machine
    // Random loss of frames going from A to B only: the testbed puts the
    // gateway at A, so a path between two clusters crosses one lossy hop
    // per direction (the sender's uplink) and loses `loss` of its frames.
    double loss = 0;
    std::uint64_t seed = 1; // of the loss decisions: a run can be repeated
    std::string stats_file; // written on SIGUSR2 (empty: never)
    bool help = false;
};

// Throws UsageError naming the argument that is wrong and why.
Options parse_options(int argc, char** argv);

std::string usage_text();

} // namespace hashi::delayline
