// SPDX-License-Identifier: BSD-3-Clause
// Per-peer statistics. With FI_HASHI_STATS_DIR set, every endpoint writes
// one file there when it closes: a line per peer with bytes and messages each
// way, the deepest its unexpected queue got, rendezvous and RMA counts, and
// TCP retransmissions from TCP_INFO, and the route (direct, or the relay and
// trunk a peer of another cluster is reached through: relay:A.B.C.D:PORT/T).
// `hashi-info --stats DIR` sums them up.
#include "transport/engine/engine.hpp"
#include "transport/path/path.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace hashi::fi {

void engine::write_stats() const
{
    const char* dir = std::getenv("FI_HASHI_STATS_DIR");
    if (dir == nullptr || *dir == '\0')
        return;
    const std::string file = std::string(dir) + "/" + self_.host + "." + std::to_string(getpid()) + ".stats";
    FILE* f = std::fopen(file.c_str(), "w");
    if (f == nullptr) {
        log_warn("FI_HASHI_STATS_DIR: cannot write %s: %s", file.c_str(), std::strerror(errno));
        return;
    }
    std::fprintf(f, "# hashi endpoint %s pid %d host %s\n", self_.addr.describe().c_str(), static_cast<int>(getpid()),
        self_.host.c_str());
    std::fprintf(f,
        "# peer host pid tx_bytes tx_msgs rx_bytes rx_msgs unexpected_max rendezvous rma_ops "
        "tcp_retransmits route\n");
    peers_.for_each([&](const peer& pr) {
        const peer* p = &pr;
        const auto& s = p->stats;
        if (s.tx_msgs + s.rx_msgs + s.rma_ops == 0 && s.tx_bytes + s.rx_bytes == 0)
            return;
        unsigned retrans = 0;
        for (const path* c : p->paths) {
            if (c->fd() < 0 || p->is_self)
                continue;
            tcp_info ti {};
            socklen_t len = sizeof ti;
            if (::getsockopt(c->fd(), IPPROTO_TCP, TCP_INFO, &ti, &len) == 0)
                retrans += ti.tcpi_total_retrans;
        }
        std::string how = p->is_self ? "self" : "direct";
        if (const route r = router_.route_for(*p); r.how == route::kind::relay)
            how = "relay:" + relay_endpoint {r.ipv4, r.port}.describe() + "/" + std::to_string(r.trunk);
        std::fprintf(f, "%s %s %u %llu %llu %llu %llu %llu %llu %llu %u %s\n",
            p->is_self ? "self" : (p->fi_addr == FI_ADDR_NOTAVAIL ? "?" : std::to_string(p->fi_addr).c_str()),
            p->host.empty() ? "?" : p->host.c_str(), p->pid, static_cast<unsigned long long>(s.tx_bytes),
            static_cast<unsigned long long>(s.tx_msgs), static_cast<unsigned long long>(s.rx_bytes),
            static_cast<unsigned long long>(s.rx_msgs), static_cast<unsigned long long>(s.unexpected_max),
            static_cast<unsigned long long>(s.rendezvous), static_cast<unsigned long long>(s.rma_ops), retrans,
            how.c_str());
    });
    std::fclose(f);
}

} // namespace hashi::fi
