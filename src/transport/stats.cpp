// SPDX-License-Identifier: BSD-3-Clause
// Per-peer statistics. With FI_HASHI_STATS_DIR set, every endpoint keeps
// one file there, rewritten every stats_period_ns while the endpoint makes
// progress and once more when it closes: a line per peer with bytes and
// messages each way, the deepest its unexpected queue got, rendezvous and
// RMA counts, TCP retransmissions from TCP_INFO, the route (direct, or the
// relay and trunk a peer of another cluster is reached through:
// relay:A.B.C.D:PORT/T), and the pacing limit of its connections (bytes/s,
// 0: none). Written under a temporary name and renamed, so a reader
// (`hashi-info --stats DIR`, `--watch` while the job runs) never sees half.
#include "transport/engine/engine.hpp"
#include "transport/engine/log_limiter.hpp"
#include "transport/path/path.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace hashi::fi {
namespace {

// SO_MAX_PACING_RATE as the kernel has it (wan_pacing sets it): 4 bytes on
// older kernels, 8 on newer; all ones means no limit.
unsigned long long pacing_limit(int fd)
{
    std::uint64_t rate = 0;
    socklen_t len = sizeof rate;
    if (::getsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, &len) != 0)
        return 0;
    if (len == sizeof(std::uint32_t)) {
        std::uint32_t narrow = 0;
        std::memcpy(&narrow, &rate, sizeof narrow);
        return narrow == ~std::uint32_t {0} ? 0 : narrow;
    }
    return rate == ~std::uint64_t {0} ? 0 : rate;
}

} // namespace

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
    std::fprintf(f,
        "# peer host pid tx_bytes tx_msgs rx_bytes rx_msgs unexpected_max rendezvous rma_ops "
        "tcp_retransmits route max_pacing_rate\n");
    peers_.for_each([&](const peer& pr) {
        const peer* p = &pr;
        const auto& s = p->stats;
        if (s.tx_msgs + s.rx_msgs + s.rma_ops == 0 && s.tx_bytes + s.rx_bytes == 0)
            return;
        unsigned retrans = 0;
        unsigned long long pacing = 0; // the highest limit of its paths, 0: none
        for (const path* c : p->paths) {
            if (c->fd() < 0 || p->is_self)
                continue;
            tcp_info ti {};
            socklen_t len = sizeof ti;
            if (::getsockopt(c->fd(), IPPROTO_TCP, TCP_INFO, &ti, &len) == 0)
                retrans += ti.tcpi_total_retrans;
            pacing = std::max(pacing, pacing_limit(c->fd()));
        }
        std::string how = p->is_self ? "self" : "direct";
        if (const route r = router_.route_for(*p); r.how == route::kind::relay)
            how = "relay:" + relay_endpoint {r.ipv4, r.port}.describe() + "/" + std::to_string(r.trunk);
        std::fprintf(f, "%s %s %u %llu %llu %llu %llu %llu %llu %llu %u %s %llu\n",
            p->is_self ? "self" : (p->fi_addr == FI_ADDR_NOTAVAIL ? "?" : std::to_string(p->fi_addr).c_str()),
            p->host.empty() ? "?" : p->host.c_str(), p->pid, static_cast<unsigned long long>(s.tx_bytes),
            static_cast<unsigned long long>(s.tx_msgs), static_cast<unsigned long long>(s.rx_bytes),
            static_cast<unsigned long long>(s.rx_msgs), static_cast<unsigned long long>(s.unexpected_max),
            static_cast<unsigned long long>(s.rendezvous), static_cast<unsigned long long>(s.rma_ops), retrans,
            how.c_str(), pacing);
    });
    if (std::fclose(f) == 0)
        std::rename(tmp.c_str(), file.c_str());
    else
        std::remove(tmp.c_str());
}

} // namespace hashi::fi
