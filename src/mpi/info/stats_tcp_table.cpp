// SPDX-License-Identifier: BSD-3-Clause
// `hashi-info --stats DIR --tcp`: the kernel's view of each peer's TCP
// connections, from the TCP_INFO columns of the statistics files. Apart
// from the traffic table, so that table stays narrow enough to read.
#include "mpi/info/stats_summary.hpp"

#include <iomanip>
#include <ostream>
#include <sstream>
#include <string>

namespace hashi {
namespace {

std::string fixed(double v, int decimals)
{
    std::ostringstream s;
    s << std::fixed << std::setprecision(decimals) << v;
    return s.str();
}

// bytes/s as MiB/s; "-" for none (no limit set, or an older file).
std::string mib_per_s(unsigned long long bytes_per_s)
{
    return bytes_per_s == 0 ? "-" : fixed(static_cast<double>(bytes_per_s) / (1024.0 * 1024.0), 1);
}

} // namespace

void print_tcp_table(const StatsSnapshot& now, std::ostream& out)
{
    out << std::left << std::setw(24) << "endpoint" << std::setw(6) << "peer" << std::setw(16) << "peer host"
        << std::right << std::setw(8) << "retx" << std::setw(7) << "rtos" << std::setw(7) << "lost" << std::setw(8)
        << "in retx" << std::setw(8) << "cwnd" << std::setw(10) << "srtt ms" << std::setw(12) << "pace MiB/s"
        << std::setw(12) << "limit MiB/s"
        << "  route\n";
    unsigned long long retrans = 0, rtos = 0, lost = 0;
    bool rtos_known = false;
    size_t without = 0;
    for (const auto& p : now.peers) {
        out << std::left << std::setw(24) << p.endpoint << std::setw(6) << p.peer << std::setw(16) << p.host
            << std::right << std::setw(8) << p.retrans;
        if (p.has_tcp) {
            out << std::setw(7) << (p.rtos_known ? std::to_string(p.rtos) : "-") << std::setw(7) << p.lost
                << std::setw(8) << p.retrans_out << std::setw(8) << p.cwnd << std::setw(10)
                << fixed(static_cast<double>(p.srtt_us) / 1000.0, 2) << std::setw(12) << mib_per_s(p.pacing_rate);
        } else {
            ++without;
            out << std::setw(7) << "?" << std::setw(7) << "?" << std::setw(8) << "?" << std::setw(8) << "?"
                << std::setw(10) << "?" << std::setw(12) << "?";
        }
        out << std::setw(12) << mib_per_s(p.pacing) << "  " << p.route << "\n";
        retrans += p.retrans;
        rtos += p.rtos;
        rtos_known = rtos_known || p.rtos_known;
        lost += p.lost;
    }
    out << "total: " << now.endpoints << " endpoints, " << retrans << " TCP retransmissions, "
        << (rtos_known ? std::to_string(rtos) : std::string("unknown (kernel before 6.7)"))
        << " retransmission timeouts, " << lost << " segments lost now";
    if (without != 0)
        out << "; " << without << " peer line(s) from files without the TCP columns (?)";
    out << "\n";
    // Why each endpoint's WAN paths pace at the limit shown above.
    for (const auto& e : now.pacing)
        out << "wan pacing: " << e.endpoint << " " << (e.rate == 0 ? std::string("no limit") : mib_per_s(e.rate) + " MiB/s")
            << " (" << e.reason << ")\n";
}

} // namespace hashi
