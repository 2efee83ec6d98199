// SPDX-License-Identifier: BSD-3-Clause
#include "mpi/info/stats_summary.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <ostream>
#include <sstream>
#include <utility>

namespace hashi {

namespace {

namespace fs = std::filesystem;

std::string mib(unsigned long long b)
{
    std::ostringstream s;
    s << std::fixed << std::setprecision(1) << static_cast<double>(b) / (1024.0 * 1024.0);
    return s.str();
}

std::string rate_text(double bytes_per_s)
{
    std::ostringstream s;
    s << std::fixed << std::setprecision(1) << bytes_per_s / (1024.0 * 1024.0);
    return s.str();
}

// The files of `dir` whose names satisfy `wanted`, sorted.
template <typename Wanted> std::vector<fs::path> files_of(const std::string& dir, Wanted wanted)
{
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (wanted(e.path()))
            files.push_back(e.path());
    std::sort(files.begin(), files.end());
    return files;
}

} // namespace

std::optional<StatsSnapshot> read_stats_dir(const std::string& dir, std::string& error)
{
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
        error =
            "hashi-info: --stats " + dir + ": not a directory (run the job with FI_HASHI_STATS_DIR=" + dir + " first)";
        return std::nullopt;
    }
    // Endpoints write NAME.stats.tmp and rename it: only whole files count.
    const auto files = files_of(dir, [](const fs::path& p) { return p.extension() == ".stats"; });
    if (files.empty()) {
        error = "hashi-info: --stats " + dir + ": no *.stats files (was FI_HASHI_STATS_DIR set for the job?)";
        return std::nullopt;
    }
    StatsSnapshot snap;
    snap.endpoints = files.size();
    for (const auto& f : files) {
        std::ifstream in(f);
        std::string text;
        int n = 0;
        while (std::getline(in, text)) {
            ++n;
            if (text.rfind("# wan_pacing ", 0) == 0) {
                std::istringstream s(text.substr(13));
                EndpointPacing e;
                e.endpoint = f.stem().string();
                if (s >> e.rate >> e.reason)
                    snap.pacing.push_back(std::move(e));
                continue;
            }
            if (text.rfind("# idle ", 0) == 0) {
                std::istringstream s(text.substr(7));
                EndpointIdle e;
                std::string k1, mode, k2, k3, k4, k5, k6;
                int crowded = 0;
                if (!(s >> k1 >> e.spin_us >> mode >> k2 >> crowded >> k3 >> e.ranks >> k4 >> e.cpus >> k5 >>
                        e.yields >> k6 >> e.naps) ||
                    k1 != "spin_us" || (mode != "chosen" && mode != "fixed") || k2 != "crowded" || k3 != "ranks" ||
                    k4 != "cpus" || k5 != "yields" || k6 != "naps") {
                    error = "hashi-info: " + f.string() + ":" + std::to_string(n) +
                        ": not an idle line (expected '# idle spin_us N chosen|fixed crowded 0|1 ranks N cpus N "
                        "yields N naps N')";
                    return std::nullopt;
                }
                e.fixed = mode == "fixed";
                e.crowded = crowded != 0;
                snap.idle.push_back(e);
                continue;
            }
            if (text.empty() || text[0] == '#')
                continue;
            std::istringstream s(text);
            PeerStats p;
            p.endpoint = f.stem().string();
            if (!(s >> p.peer >> p.host >> p.pid >> p.tx_bytes >> p.tx_msgs >> p.rx_bytes >> p.rx_msgs >>
                    p.unexpected_max >> p.rendezvous >> p.rma >> p.retrans)) {
                error = "hashi-info: " + f.string() + ":" + std::to_string(n) +
                    ": not a statistics line (expected 11 fields, a route and a pacing rate: peer host pid tx_bytes "
                    "tx_msgs rx_bytes rx_msgs unexpected_max rendezvous rma_ops tcp_retransmits route "
                    "max_pacing_rate)";
                return std::nullopt;
            }
            if (std::string r; s >> r)
                p.route = r;
            if (unsigned long long pace = 0; s >> pace)
                p.pacing = pace;
            // The TCP_INFO columns, in files that have them: all or none.
            if (std::string rtos; s >> rtos) {
                p.rtos_known = rtos != "-";
                if (p.rtos_known)
                    std::istringstream(rtos) >> p.rtos;
                if (!(s >> p.lost >> p.retrans_out >> p.cwnd >> p.srtt_us >> p.pacing_rate) ||
                    (p.rtos_known && rtos.find_first_not_of("0123456789") != std::string::npos)) {
                    error = "hashi-info: " + f.string() + ":" + std::to_string(n) +
                        ": the TCP columns after max_pacing_rate are incomplete (expected tcp_rtos (a number or "
                        "'-') tcp_lost tcp_retrans_out cwnd srtt_us pacing_rate)";
                    return std::nullopt;
                }
                p.has_tcp = true;
            }
            snap.peers.push_back(std::move(p));
        }
    }
    return snap;
}

void print_stats_table(const StatsSnapshot& now, std::ostream& out, const StatsSnapshot* before, double seconds)
{
    std::map<std::pair<std::string, std::string>, const PeerStats*> earlier;
    if (before != nullptr)
        for (const auto& p : before->peers)
            earlier[{p.endpoint, p.peer}] = &p;
    const bool rates = before != nullptr && seconds > 0;
    out << std::left << std::setw(24) << "endpoint" << std::setw(6) << "peer" << std::setw(16) << "peer host"
        << std::right << std::setw(10) << "tx MiB" << std::setw(10) << "tx msgs" << std::setw(10) << "rx MiB"
        << std::setw(10) << "rx msgs";
    if (rates)
        out << std::setw(10) << "tx MiB/s" << std::setw(10) << "rx MiB/s";
    out << std::setw(8) << "unexp" << std::setw(8) << "rdv" << std::setw(8) << "rma" << std::setw(8) << "retx"
        << std::setw(12) << "pace MiB/s"
        << "  route\n";
    PeerStats total;
    for (const auto& p : now.peers) {
        out << std::left << std::setw(24) << p.endpoint << std::setw(6) << p.peer << std::setw(16) << p.host
            << std::right << std::setw(10) << mib(p.tx_bytes) << std::setw(10) << p.tx_msgs << std::setw(10)
            << mib(p.rx_bytes) << std::setw(10) << p.rx_msgs;
        if (rates) {
            // A peer new since the last look counts from zero.
            const auto it = earlier.find({p.endpoint, p.peer});
            const PeerStats zero;
            const PeerStats& b = it == earlier.end() ? zero : *it->second;
            auto delta = [](unsigned long long a, unsigned long long was) { return a >= was ? a - was : 0ULL; };
            out << std::setw(10) << rate_text(static_cast<double>(delta(p.tx_bytes, b.tx_bytes)) / seconds)
                << std::setw(10) << rate_text(static_cast<double>(delta(p.rx_bytes, b.rx_bytes)) / seconds);
        }
        out << std::setw(8) << p.unexpected_max << std::setw(8) << p.rendezvous << std::setw(8) << p.rma << std::setw(8)
            << p.retrans << std::setw(12)
            << (p.pacing == 0 ? std::string("-") : rate_text(static_cast<double>(p.pacing))) << "  " << p.route << "\n";
        total.tx_bytes += p.tx_bytes;
        total.tx_msgs += p.tx_msgs;
        total.rx_bytes += p.rx_bytes;
        total.rx_msgs += p.rx_msgs;
        total.unexpected_max = std::max(total.unexpected_max, p.unexpected_max);
        total.rendezvous += p.rendezvous;
        total.rma += p.rma;
        total.retrans += p.retrans;
    }
    out << "total: " << now.endpoints << " endpoints, " << mib(total.tx_bytes) << " MiB in " << total.tx_msgs
        << " messages sent, " << mib(total.rx_bytes) << " MiB in " << total.rx_msgs
        << " received, deepest unexpected queue " << total.unexpected_max << ", " << total.rendezvous << " rendezvous, "
        << total.rma << " RMA operations served, " << total.retrans << " TCP retransmissions\n";
    print_idle_line(now, out);
}

void print_idle_line(const StatsSnapshot& now, std::ostream& out)
{
    if (now.idle.empty())
        return;
    // Endpoints grouped by the spin they run and why.
    std::map<std::string, size_t> kinds;
    unsigned long long yields = 0, naps = 0;
    for (const auto& e : now.idle) {
        std::string why;
        if (e.fixed)
            why = "fixed by FI_HASHI_SPIN_US";
        else if (e.cpus == 0)
            why = "chosen, no census";
        else
            why = "chosen, " + std::to_string(e.ranks) + " ranks on " + std::to_string(e.cpus) + " CPUs" +
                (e.crowded ? ": crowded" : "");
        ++kinds["spin " + std::to_string(e.spin_us) + " us (" + why + ")"];
        yields += e.yields;
        naps += e.naps;
    }
    out << "waiting ranks:";
    const char* sep = " ";
    for (const auto& [what, count] : kinds) {
        out << sep << what << " on " << count;
        sep = "; ";
    }
    out << "; " << yields << " yields and " << naps << " naps in all\n";
}

size_t print_relay_trunks(const std::string& dir, std::ostream& out)
{
    // impi-relay --stats-dir: relay-K.ID, renamed into place like ours.
    const auto files = files_of(dir, [](const fs::path& p) {
        const auto name = p.filename().string();
        return name.starts_with("relay-") && p.extension() != ".tmp";
    });
    if (files.empty())
        return 0;
    out << "impi-relay trunks (" << files.size() << " relay" << (files.size() == 1 ? "" : "s") << "):\n"
        << std::left << std::setw(12) << "  relay" << std::setw(16) << "to cluster.relay" << std::right << std::setw(4)
        << "up" << std::setw(10) << "out MiB" << std::setw(10) << "frames" << std::setw(10) << "in MiB" << std::setw(10)
        << "frames" << std::setw(9) << "streams" << std::setw(8) << "queue" << std::setw(7) << "retx" << std::setw(8)
        << "rtt ms" << std::setw(13) << "pace Mbit/s"
        << "\n";
    for (const auto& f : files) {
        std::ifstream in(f);
        std::string text;
        while (std::getline(in, text)) {
            if (text.empty() || text[0] == '#')
                continue;
            std::istringstream s(text);
            unsigned cluster = 0, relay = 0;
            int up = 0;
            unsigned long long bytes_out = 0, frames_out = 0, bytes_in = 0, frames_in = 0, streams = 0, opened = 0,
                               refused = 0, heartbeats = 0, queue = 0;
            if (!(s >> cluster >> relay >> up >> bytes_out >> frames_out >> bytes_in >> frames_in >> streams >>
                    opened >> refused >> heartbeats >> queue))
                continue; // a relay of another version: its other lines still show
            // The kernel's view of the trunk (TCP_INFO), from relays that
            // write it: retransmitted segments, the smoothed round trip,
            // and the pacing limit of --wan-rate (0: none).
            unsigned long long peak = 0, retrans = 0, cwnd = 0, srtt_us = 0, pacing = 0, max_pacing = 0;
            long long rtos = 0;
            const bool tcp = static_cast<bool>(s >> peak >> retrans >> rtos >> cwnd >> srtt_us >> pacing >> max_pacing);
            out << std::left << std::setw(12) << ("  " + f.filename().string().substr(6)) << std::setw(16)
                << (std::to_string(cluster) + "." + std::to_string(relay)) << std::right << std::setw(4)
                << (up != 0 ? "yes" : "no") << std::setw(10) << mib(bytes_out) << std::setw(10) << frames_out
                << std::setw(10) << mib(bytes_in) << std::setw(10) << frames_in << std::setw(9) << streams
                << std::setw(8) << queue;
            if (tcp) {
                char rtt[16], pace[24];
                std::snprintf(rtt, sizeof rtt, "%.1f", static_cast<double>(srtt_us) / 1000.0);
                if (max_pacing != 0)
                    std::snprintf(pace, sizeof pace, "%.1f", static_cast<double>(max_pacing) * 8 / 1e6);
                else
                    std::snprintf(pace, sizeof pace, "none");
                out << std::setw(7) << retrans << std::setw(8) << rtt << std::setw(13) << pace;
            }
            out << "\n";
        }
    }
    return files.size();
}

int print_stats_summary(const std::string& dir, std::ostream& out, std::ostream& err, StatsView view)
{
    std::string error;
    const auto snap = read_stats_dir(dir, error);
    if (!snap) {
        err << error << "\n";
        return 1;
    }
    if (view == StatsView::tcp)
        print_tcp_table(*snap, out);
    else
        print_stats_table(*snap, out);
    print_relay_trunks(dir, out);
    return 0;
}

} // namespace hashi
