// SPDX-License-Identifier: BSD-3-Clause
#include "transport/tcp_telemetry.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstddef>

namespace hashi::fi {
namespace {

// struct tcp_info as the kernel's UAPI has it up to tcpi_total_rto_time
// (Linux 6.7). The C library's copy stops long before (no pacing rate, no
// RTO count); the kernel fills as much as the caller asks for and its own
// version knows, and says how much in the returned length, so a field is
// read only when the length covers it. The layout only ever grows at the end.
struct KernelTcpInfo {
    std::uint8_t state, ca_state, retransmits, probes, backoff, options, wscale, app_limited;
    std::uint32_t rto, ato, snd_mss, rcv_mss;
    std::uint32_t unacked, sacked, lost, retrans, fackets;
    std::uint32_t last_data_sent, last_ack_sent, last_data_recv, last_ack_recv;
    std::uint32_t pmtu, rcv_ssthresh, rtt, rttvar, snd_ssthresh, snd_cwnd, advmss, reordering;
    std::uint32_t rcv_rtt, rcv_space;
    std::uint32_t total_retrans;
    std::uint64_t pacing_rate, max_pacing_rate;
    std::uint64_t bytes_acked, bytes_received;
    std::uint32_t segs_out, segs_in;
    std::uint32_t notsent_bytes, min_rtt, data_segs_in, data_segs_out;
    std::uint64_t delivery_rate;
    std::uint64_t busy_time, rwnd_limited, sndbuf_limited;
    std::uint32_t delivered, delivered_ce;
    std::uint64_t bytes_sent, bytes_retrans;
    std::uint32_t dsack_dups, reord_seen;
    std::uint32_t rcv_ooopack;
    std::uint32_t snd_wnd, rcv_wnd;
    std::uint32_t rehash;
    std::uint16_t total_rto, total_rto_recoveries;
    std::uint32_t total_rto_time;
};

// The prefix the C library describes must sit where ours does.
static_assert(offsetof(KernelTcpInfo, lost) == offsetof(::tcp_info, tcpi_lost));
static_assert(offsetof(KernelTcpInfo, snd_cwnd) == offsetof(::tcp_info, tcpi_snd_cwnd));
static_assert(offsetof(KernelTcpInfo, total_retrans) == offsetof(::tcp_info, tcpi_total_retrans));
static_assert(offsetof(KernelTcpInfo, pacing_rate) == 104);
static_assert(offsetof(KernelTcpInfo, delivery_rate) == 160);
static_assert(offsetof(KernelTcpInfo, total_rto) == 240 && sizeof(KernelTcpInfo) == 248);

template <typename Field> bool covered(socklen_t len, std::size_t offset) noexcept
{
    return len >= offset + sizeof(Field);
}

} // namespace

void TcpTelemetry::add(const TcpTelemetry& other) noexcept
{
    total_retrans += other.total_retrans;
    rtos += other.rtos;
    rtos_known = rtos_known || other.rtos_known;
    lost += other.lost;
    retrans_out += other.retrans_out;
    cwnd += other.cwnd;
    srtt_us = std::max(srtt_us, other.srtt_us);
    pacing_rate += other.pacing_rate;
    delivery_rate += other.delivery_rate;
    max_pacing_rate = std::max(max_pacing_rate, other.max_pacing_rate);
}

void TcpTelemetry::retire(const TcpTelemetry& closed) noexcept
{
    const std::uint64_t retrans_before = total_retrans, rtos_before = rtos;
    const bool rtos_known_before = rtos_known;
    *this = closed;
    total_retrans += retrans_before;
    rtos += rtos_before;
    rtos_known = rtos_known || rtos_known_before;
}

void TcpTelemetry::add_history(const TcpTelemetry& history, bool any_open) noexcept
{
    if (!any_open) {
        const std::uint64_t retrans_open = total_retrans, rtos_open = rtos;
        *this = history;
        total_retrans += retrans_open;
        rtos += rtos_open;
        return;
    }
    total_retrans += history.total_retrans;
    rtos += history.rtos;
    rtos_known = rtos_known || history.rtos_known;
}

std::optional<TcpTelemetry> read_tcp_telemetry(int fd) noexcept
{
    KernelTcpInfo ti {};
    socklen_t len = sizeof ti;
    if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0) {
        return std::nullopt;
    }
    TcpTelemetry t;
    t.total_retrans = ti.total_retrans;
    t.lost = ti.lost;
    t.retrans_out = ti.retrans;
    t.cwnd = ti.snd_cwnd;
    t.srtt_us = ti.rtt;
    if (covered<std::uint64_t>(len, offsetof(KernelTcpInfo, max_pacing_rate))) {
        t.pacing_rate = ti.pacing_rate;
        // All ones: no limit set.
        t.max_pacing_rate = ti.max_pacing_rate == ~std::uint64_t {0} ? 0 : ti.max_pacing_rate;
    }
    if (covered<std::uint64_t>(len, offsetof(KernelTcpInfo, delivery_rate))) {
        t.delivery_rate = ti.delivery_rate;
    }
    if (covered<std::uint16_t>(len, offsetof(KernelTcpInfo, total_rto))) {
        t.rtos = ti.total_rto;
        t.rtos_known = true;
    }
    return t;
}

} // namespace hashi::fi
