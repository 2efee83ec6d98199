// SPDX-License-Identifier: BSD-3-Clause
#include "mpi/info/stats_summary.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <vector>

namespace hashi {

namespace {

struct peer_line {
    std::string endpoint; // file name: host.pid
    std::string peer, host;
    std::string route = "direct"; // files written before the route column have none
    unsigned long long pid = 0, tx_bytes = 0, tx_msgs = 0, rx_bytes = 0, rx_msgs = 0, unexpected_max = 0,
                       rendezvous = 0, rma = 0, retrans = 0;
};

std::string mib(unsigned long long b)
{
    std::ostringstream s;
    s << std::fixed << std::setprecision(1) << static_cast<double>(b) / (1024.0 * 1024.0);
    return s.str();
}

} // namespace

int print_stats_summary(const std::string& dir, std::ostream& out, std::ostream& err)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
        err << "hashi-info: --stats " << dir << ": not a directory (run the job with FI_HASHI_STATS_DIR=" << dir
            << " first)\n";
        return 1;
    }
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.path().extension() == ".stats")
            files.push_back(e.path());
    std::sort(files.begin(), files.end());
    if (files.empty()) {
        err << "hashi-info: --stats " << dir << ": no *.stats files (was FI_HASHI_STATS_DIR set for the job?)\n";
        return 1;
    }
    std::vector<peer_line> lines;
    for (const auto& f : files) {
        std::ifstream in(f);
        std::string text;
        int n = 0;
        while (std::getline(in, text)) {
            ++n;
            if (text.empty() || text[0] == '#')
                continue;
            std::istringstream s(text);
            peer_line p;
            p.endpoint = f.stem().string();
            if (!(s >> p.peer >> p.host >> p.pid >> p.tx_bytes >> p.tx_msgs >> p.rx_bytes >> p.rx_msgs >>
                    p.unexpected_max >> p.rendezvous >> p.rma >> p.retrans)) {
                err << "hashi-info: " << f.string() << ":" << n
                    << ": not a statistics line (expected 11 fields and a route: peer host pid tx_bytes tx_msgs "
                       "rx_bytes rx_msgs unexpected_max rendezvous rma_ops tcp_retransmits route)\n";
                return 1;
            }
            if (std::string r; s >> r)
                p.route = r;
            lines.push_back(p);
        }
    }
    out << std::left << std::setw(24) << "endpoint" << std::setw(6) << "peer" << std::setw(16) << "peer host"
        << std::right << std::setw(10) << "tx MiB" << std::setw(10) << "tx msgs" << std::setw(10) << "rx MiB"
        << std::setw(10) << "rx msgs" << std::setw(8) << "unexp" << std::setw(8) << "rdv" << std::setw(8) << "rma"
        << std::setw(8) << "retx" << "  route"
        << "\n";
    peer_line total;
    for (const auto& p : lines) {
        out << std::left << std::setw(24) << p.endpoint << std::setw(6) << p.peer << std::setw(16) << p.host
            << std::right << std::setw(10) << mib(p.tx_bytes) << std::setw(10) << p.tx_msgs << std::setw(10)
            << mib(p.rx_bytes) << std::setw(10) << p.rx_msgs << std::setw(8) << p.unexpected_max << std::setw(8)
            << p.rendezvous << std::setw(8) << p.rma << std::setw(8) << p.retrans << "  " << p.route << "\n";
        total.tx_bytes += p.tx_bytes;
        total.tx_msgs += p.tx_msgs;
        total.rx_bytes += p.rx_bytes;
        total.rx_msgs += p.rx_msgs;
        total.unexpected_max = std::max(total.unexpected_max, p.unexpected_max);
        total.rendezvous += p.rendezvous;
        total.rma += p.rma;
        total.retrans += p.retrans;
    }
    out << "total: " << files.size() << " endpoints, " << mib(total.tx_bytes) << " MiB in " << total.tx_msgs
        << " messages sent, " << mib(total.rx_bytes) << " MiB in " << total.rx_msgs
        << " received, deepest unexpected queue " << total.unexpected_max << ", " << total.rendezvous << " rendezvous, "
        << total.rma << " RMA operations served, " << total.retrans << " TCP retransmissions\n";
    return 0;
}

} // namespace hashi
