// SPDX-License-Identifier: BSD-3-Clause
// Per-peer statistics. With FI_HASHI_STATS_DIR set, every endpoint keeps
// one file there, rewritten every stats_period_ns while the endpoint makes
// progress and once more when it closes: a line per peer with bytes and
// messages each way, the deepest its unexpected queue got, rendezvous and
// RMA counts, TCP retransmissions from TCP_INFO, the route (direct, or the
// relay and trunk a peer of another cluster is reached through:
// relay:A.B.C.D:PORT/T), and the pacing limit of its connections (bytes/s,
// 0: none); then, from TCP_INFO too (tcp_telemetry.hpp), the retransmission
// timeouts ('-' where the kernel does not count them), the segments lost and
// retransmitted but unacknowledged now, the congestion window (segments),
// the smoothed round trip (us) and the rate the kernel paces at (bytes/s),
// added up over the peer's connections (the round trip: the slowest), and
// for a peer whose connections have closed, their last look; comment lines
// say how many sends coalescing held and what the idle policy chose. New
// columns only ever go at the end, so older readers still read the rest.
// Written under a temporary name and renamed, so a reader (`hashi-info
// --stats DIR`, `--watch` while the job runs) never sees half.
#include "transport/engine/engine.hpp"
#include "transport/engine/log_limiter.hpp"
#include "transport/objects.hpp"
#include "transport/path/path.hpp"
#include "transport/tcp_telemetry.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace hashi::fi {

void engine::stats_progress()
{
    if (stats_dir_.empty())
        return;
    const std::uint64_t now = monotonic_ns();
    if (now < next_stats_write_ns_)
        return;
    next_stats_write_ns_ = now + stats_period_ns;
    write_stats();
}

void engine::write_stats() const
{
    if (stats_dir_.empty())
        return;
    const std::string file = stats_dir_ + "/" + self_.host + "." + std::to_string(getpid()) + ".stats";
    const std::string tmp = file + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "w");
    if (f == nullptr) {
        if (!stats_warned_) {
            log_warn("FI_HASHI_STATS_DIR: cannot write %s: %s", tmp.c_str(), std::strerror(errno));
            stats_warned_ = true; // once, not every period
        }
        return;
    }
    std::fprintf(f, "# hashi endpoint %s pid %d host %s\n", self_.addr.describe().c_str(), static_cast<int>(getpid()),
        self_.host.c_str());
    // The process's WAN pacing and why: one rate for all its WAN paths.
    // The share (of the WAN link), why, the payload rate the pacers hold
    // it to, and over how many sockets sending it is split now.
    std::fprintf(f, "# wan_pacing %llu %s payload %llu sending %zu\n", static_cast<unsigned long long>(pacing_.rate()),
        pacing_.reason(), static_cast<unsigned long long>(pacing_.payload_rate()), pacing_.sending().count());
    // Sends held and written together (engine/send_coalescing.hpp); late:
    // releases that came after computation, each of which backs off.
    // flushed: batches the flusher thread wrote (engine/held_flusher.hpp).
    std::fprintf(f, "# send_coalescing held %llu releases %llu late %llu backoff %u flushed %llu\n",
        static_cast<unsigned long long>(coalescing_.frames_held()),
        static_cast<unsigned long long>(coalescing_.releases()),
        static_cast<unsigned long long>(coalescing_.late_releases()), static_cast<unsigned>(coalescing_.backoff()),
        static_cast<unsigned long long>(coalescing_.flushes()));
    // What a waiting rank does with its core and why (engine/idle_wait.hpp):
    // the spin now, chosen or fixed (FI_HASHI_SPIN_US), whether the job
    // has more ranks than CPUs on this machine by its census (0 0: none
    // taken), as the last progress call saw it, and the yields and naps so
    // far.
    const idle_wait& idle = domain_.idle;
    std::fprintf(f, "# idle spin_us %llu %s crowded %d ranks %u cpus %u yields %llu naps %llu\n",
        static_cast<unsigned long long>(idle.spin_ns() / 1000), idle.fixed() ? "fixed" : "chosen",
        idle.crowded() ? 1 : 0, idle.ranks_seen(), idle.cpus_seen(), static_cast<unsigned long long>(idle.yields()),
        static_cast<unsigned long long>(idle.naps()));
    std::fprintf(f,
        "# peer host pid tx_bytes tx_msgs rx_bytes rx_msgs unexpected_max rendezvous rma_ops "
        "tcp_retransmits route max_pacing_rate tcp_rtos tcp_lost tcp_retrans_out cwnd srtt_us pacing_rate\n");
    peers_.for_each([&](const peer& pr) {
        const peer* p = &pr;
        const auto& s = p->stats;
        if (s.tx_msgs + s.rx_msgs + s.rma_ops == 0 && s.tx_bytes + s.rx_bytes == 0)
            return;
        TcpTelemetry tcp; // of all its paths
        bool any_open = false;
        for (const path* c : p->paths) {
            if (c->fd() < 0 || p->is_self)
                continue;
            if (const auto t = read_tcp_telemetry(c->fd())) {
                tcp.add(*t);
                any_open = true;
            }
        }
        tcp.add_history(p->closed_tcp, any_open);
        std::string how = p->is_self ? "self" : "direct";
        if (const route r = router_.route_for(*p); r.how == route::kind::relay)
            how = "relay:" + relay_endpoint {r.ipv4, r.port}.describe() + "/" + std::to_string(r.trunk);
        const std::string rtos = tcp.rtos_known ? std::to_string(tcp.rtos) : "-";
        std::fprintf(f, "%s %s %u %llu %llu %llu %llu %llu %llu %llu %llu %s %llu %s %llu %llu %llu %llu %llu\n",
            p->is_self ? "self" : (p->fi_addr == FI_ADDR_NOTAVAIL ? "?" : std::to_string(p->fi_addr).c_str()),
            p->host.empty() ? "?" : p->host.c_str(), p->pid, static_cast<unsigned long long>(s.tx_bytes),
            static_cast<unsigned long long>(s.tx_msgs), static_cast<unsigned long long>(s.rx_bytes),
            static_cast<unsigned long long>(s.rx_msgs), static_cast<unsigned long long>(s.unexpected_max),
            static_cast<unsigned long long>(s.rendezvous), static_cast<unsigned long long>(s.rma_ops),
            static_cast<unsigned long long>(tcp.total_retrans), how.c_str(),
            static_cast<unsigned long long>(tcp.max_pacing_rate), rtos.c_str(),
            static_cast<unsigned long long>(tcp.lost), static_cast<unsigned long long>(tcp.retrans_out),
            static_cast<unsigned long long>(tcp.cwnd), static_cast<unsigned long long>(tcp.srtt_us),
            static_cast<unsigned long long>(tcp.pacing_rate));
    });
    if (std::fclose(f) == 0)
        std::rename(tmp.c_str(), file.c_str());
    else
        std::remove(tmp.c_str());
}

} // namespace hashi::fi
