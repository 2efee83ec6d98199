// SPDX-License-Identifier: BSD-3-Clause
// `hashi-info --stats DIR`: sums up the per-peer statistics files the hashi
// provider writes when FI_HASHI_STATS_DIR is set (one file per endpoint,
// rewritten every 2 s while the job runs and at its end), and the trunk
// files impi-relay writes with --stats-dir into the same kind of directory.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace hashi {

// One line of an endpoint's file: what it exchanged with one peer.
struct PeerStats {
    std::string endpoint; // file name: host.pid
    std::string peer, host;
    std::string route = "direct"; // files written before the route column have none
    unsigned long long pid = 0, tx_bytes = 0, tx_msgs = 0, rx_bytes = 0, rx_msgs = 0, unexpected_max = 0,
                       rendezvous = 0, rma = 0, retrans = 0;
    unsigned long long pacing = 0; // SO_MAX_PACING_RATE, bytes/s; 0: none (or an older file)
    // From TCP_INFO, summed over the peer's connections (srtt: the slowest);
    // files written before these columns have none (has_tcp false).
    bool has_tcp = false;
    bool rtos_known = false; // the kernel counts timeouts (Linux 6.7 and later)
    unsigned long long rtos = 0, lost = 0, retrans_out = 0, cwnd = 0, srtt_us = 0, pacing_rate = 0;
};

// An endpoint's WAN pacing (its file's "# wan_pacing RATE REASON" line).
struct EndpointPacing {
    std::string endpoint;
    unsigned long long rate = 0; // bytes/s for all its WAN paths; 0: no limit
    std::string reason; // job, collective, info-hint, psp-attribute, none, off
};

// What an endpoint's waiting rank does with its core (its file's "# idle"
// line, src/transport/engine/idle_wait.hpp).
struct EndpointIdle {
    unsigned long long spin_us = 0;
    bool fixed = false; // FI_HASHI_SPIN_US, not chosen
    bool crowded = false; // more ranks of the job than CPUs on its machine
    unsigned ranks = 0, cpus = 0; // its census (0 0: none taken)
    unsigned long long yields = 0, naps = 0;
};

struct StatsSnapshot {
    std::vector<PeerStats> peers;
    std::vector<EndpointPacing> pacing; // from files that have the line
    std::vector<EndpointIdle> idle; // from files that have the line
    size_t endpoints = 0; // files read
};

// Reads every *.stats file of `dir`; nullopt with `error` naming the
// directory, or the file and line that could not be read.
std::optional<StatsSnapshot> read_stats_dir(const std::string& dir, std::string& error);

// One line per endpoint and peer, then the job's totals. With `before` (an
// earlier snapshot taken `seconds` ago) each line also says how fast it
// sent and received since then.
void print_stats_table(
    const StatsSnapshot& now, std::ostream& out, const StatsSnapshot* before = nullptr, double seconds = 0);

// One line on what the endpoints' waiting ranks do with their cores
// (nothing when no file has the idle line); print_stats_table ends with it.
void print_idle_line(const StatsSnapshot& now, std::ostream& out);

// The trunks of every impi-relay that wrote its counters into `dir`
// (relay-K.ID files); prints nothing and returns 0 when there are none.
size_t print_relay_trunks(const std::string& dir, std::ostream& out);

// What the kernel says of each peer's TCP connections (`--tcp`): total
// retransmissions and timeouts, segments lost and in retransmission now,
// congestion window, smoothed round trip, the rate it paces at and the
// limit set on it; then the job's totals.
void print_tcp_table(const StatsSnapshot& now, std::ostream& out);

// Which table --stats prints.
enum class StatsView { traffic, tcp };

// read_stats_dir, print_stats_table (or print_tcp_table) and
// print_relay_trunks. Returns 0, or 1 with the message on `err`.
int print_stats_summary(
    const std::string& dir, std::ostream& out, std::ostream& err, StatsView view = StatsView::traffic);

} // namespace hashi
