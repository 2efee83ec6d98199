// SPDX-License-Identifier: BSD-3-Clause
// The environment settings of libhashi-coll, read once at MPI_Init. Every
// rank of a job must see the same values (mpiexec passes the environment
// on); a malformed value stops the program at MPI_Init with a message that
// names the variable and says what is accepted.
#pragma once

#include "collective.hpp"

#include <array>
#include <cstddef>
#include <string>

namespace hashi::coll {

struct Settings {
    bool enabled = true; // HASHI_COLL=on|off
    int verbose = 0; // HASHI_COLL_VERBOSE=0|1|2
    // HASHI_COLL_<COLLECTIVE>=auto|mpich|<algorithm>; empty = auto.
    std::array<std::string, kCollectives> forced {};
    int wan_senders = 0; // HASHI_COLL_WAN_SENDERS, 0 = from the link parameters
    std::size_t segment_bytes = 0; // HASHI_COLL_SEGMENT, 0 = from the cost model
    std::string params_file; // HASHI_COLL_PARAMS: link parameters to use instead of probing
    std::string probe = "auto"; // HASHI_COLL_PROBE=auto|off
    std::string params_save; // HASHI_COLL_PARAMS_SAVE: write the probed parameters here
    // The job's WAN budget (pacing.hpp): HASHI_WAN_RATE in Mbit/s, 0 = from
    // the link parameters when measured or configured; HASHI_WAN_SENDERS,
    // 0 = one: a process may have the whole budget outside collectives.
    unsigned long long wan_rate_mbit = 0;
    int job_wan_senders = 0;

    bool any_forced() const;
};

// Reads the environment. Throws std::runtime_error naming the variable
// when a value is malformed.
Settings read_settings();

// The settings in force (read at MPI_Init by init.cpp).
const Settings& settings();
void set_settings(const Settings& s);

} // namespace hashi::coll
