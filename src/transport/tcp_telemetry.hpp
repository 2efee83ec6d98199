// SPDX-License-Identifier: BSD-3-Clause
// What the kernel knows about a TCP connection's health (TCP_INFO), for the
// per-peer statistics files: losses and retransmissions, timeouts, the
// congestion window, the smoothed round trip and the rate the kernel paces
// the connection at. One getsockopt per connection and statistics period.
#pragma once

#include <cstdint>
#include <optional>

namespace hashi::fi {

struct TcpTelemetry {
    std::uint64_t total_retrans = 0; // segments retransmitted over the connection's life
    std::uint64_t rtos = 0; // retransmission timeouts over its life (tcpi_total_rto)
    bool rtos_known = false; // the kernel reports tcpi_total_rto (Linux 6.7 and later)
    std::uint64_t lost = 0; // segments the kernel holds lost now (tcpi_lost)
    std::uint64_t retrans_out = 0; // retransmitted and not yet acknowledged now (tcpi_retrans)
    std::uint64_t cwnd = 0; // congestion window, segments
    std::uint64_t srtt_us = 0; // smoothed round trip, microseconds
    std::uint64_t pacing_rate = 0; // bytes/s the kernel paces at now (tcpi_pacing_rate)
    std::uint64_t max_pacing_rate = 0; // bytes/s, SO_MAX_PACING_RATE; 0: no limit
    std::uint64_t delivery_rate = 0; // bytes/s the connection delivered in its latest sample (tcpi_delivery_rate)

    // A peer with several connections: counts, windows and pacing rates
    // add up, the round trip is the slowest connection's.
    void add(const TcpTelemetry& other) noexcept;

    // The history of a peer's closed connections, kept so that the files
    // written at the end of a job (when a peer may have closed first) still
    // say something: `closed` is a connection's last look as it closed.
    // Counts add up; the gauges (window, round trip, rates, lost now) are
    // the last closed connection's.
    void retire(const TcpTelemetry& closed) noexcept;

    // This peer's open connections (added up in *this) with its `history`
    // of closed ones: the counts of both; the history's gauges only when no
    // connection is open.
    void add_history(const TcpTelemetry& history, bool any_open) noexcept;
};

// nullopt when fd is not a TCP socket the kernel can describe.
std::optional<TcpTelemetry> read_tcp_telemetry(int fd) noexcept;

} // namespace hashi::fi
