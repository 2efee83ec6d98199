// SPDX-License-Identifier: BSD-3-Clause
// impi-relay: the gateway of a cluster whose nodes have private addresses
// (relay/README.md, "Relays"). Prints the LAN addr:port that the cluster's
// mpiexec -client uses instead of impi-server's, joins the server, and
// carries the job's traffic until the job ends (0) or fails (1).
#include "common/daemon_options.hpp"
#include "common/environment.hpp"
#include "relay/relay/relay.hpp"
#include "transport/tcp_congestion_control.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <iostream>
#include <map>

using namespace hashi;

namespace {

const char* usage = R"(Usage: impi-relay -relay ID server_addr:port --cluster K [options]

Runs relay ID (0 = the leader) of cluster K, whose nodes the other clusters
cannot reach, on a gateway that reaches both its cluster's LAN and the WAN.
Prints addr:port on its first line: give it to the cluster's mpiexec as
`-client K addr:port`; the ranks reach the other clusters through the
cluster's relays. Start every relay of every cluster before the mpiexecs.
Exits 0 when the job ended, 1 when it failed, 2 on a usage error.

Options:
  -relay ID             this relay's number in its cluster (0..N-1)
  --cluster K           the cluster it serves: its mpiexec's -client K
  --relays N            how many relays (gateways) the cluster has (default
                        1, at most 8): each carries a share of the streams
  -net ADDR[/BITS]      the LAN: an address of this host, or a network whose
                        address this host has (default: this host's first
                        private address, 10/8, 172.16/12 or 192.168/16);
                        ranks and mpiexec connect here, and routes may only
                        name destinations inside it (default /24)
  -port P               the LAN port (default: any free one)
  --wan-address ADDR    where the other clusters' relays reach this one
                        (default: this host's address towards impi-server)
  --wan-port P          the WAN port (default: any free one)
  --protection LEVEL    integrity (default) or encryption (TLS 1.3) of the
                        trunks between relays
  --wan-rate MBIT       the rate of this gateway's WAN link in Mbit/s: the
                        kernel paces the trunks at 92 % of it (the rest is
                        headers and acknowledgements), split over the
                        trunks sending, so a burst after a compute phase
                        does not overflow the WAN's bottleneck (default:
                        unpaced)
  --tcp-cc NAME         the trunks' TCP congestion control, one of
                        net.ipv4.tcp_available_congestion_control (default:
                        the host's)
  -impi-secret-file F   the job's secret, as impi-server's (also
                        HASHI_IMPI_SECRET_FILE, or HASHI_IMPI_SECRET)
  --stats-dir DIR       write the per-trunk counters to DIR/relay-K.ID every
                        2 s and at the end (a line per trunk; the file's
                        header names the columns)
  -timeout SEC          give up when the startup has not completed after
                        SEC seconds (default 60; also HASHI_IMPI_TIMEOUT)
  -v, -verbose          log every route and refusal
  -h, -help             print this help

Environment: IMPI_RELAY_SOCBUF=BYTES sets SO_SNDBUF/SO_RCVBUF of the trunks
(GridMPI's variable; empty or 0: the OS default). IMPI_RELAY_TRUNK_ORDER=fifo
sends each trunk's frames in the order queued, for comparison (default fair:
control frames first, then one frame of each busy stream in turn).
Every option may also be written with two dashes, and with its value after
'=' (--port=4000).
)";

int usage_error(const std::string& what)
{
    std::cerr << "impi-relay: error: " << what << " (impi-relay -help lists the options)" << std::endl;
    return 2;
}

bool is_private(std::uint32_t a)
{
    return (a >> 24) == 10 || (a >> 20) == ((172u << 4) | 1) || (a >> 16) == ((192u << 8) | 168);
}

// The IPv4 addresses of this host's interfaces (host order), not loopback.
std::vector<std::uint32_t> own_addresses()
{
    std::vector<std::uint32_t> out;
    ifaddrs* list = nullptr;
    if (::getifaddrs(&list) != 0) {
        return out;
    }
    for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
        if (i->ifa_addr != nullptr && i->ifa_addr->sa_family == AF_INET) {
            const auto a = ntohl(reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr);
            if ((a >> 24) != 127) {
                out.push_back(a);
            }
        }
    }
    ::freeifaddrs(list);
    return out;
}

std::optional<std::uint32_t> parse_ipv4(const std::string& s)
{
    in_addr a {};
    if (::inet_pton(AF_INET, s.c_str(), &a) != 1) {
        return std::nullopt;
    }
    return ntohl(a.s_addr);
}

// The local address the kernel picks towards `host_port` (no packet sent).
std::optional<std::uint32_t> address_towards(const std::string& host_port)
{
    const auto colon = host_port.rfind(':');
    auto ip = parse_ipv4(host_port.substr(0, colon));
    if (!ip) {
        return std::nullopt;
    }
    UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    sockaddr_in sin {};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(*ip);
    sin.sin_port = htons(9);
    if (!fd || ::connect(fd.get(), reinterpret_cast<sockaddr*>(&sin), sizeof sin) != 0) {
        return std::nullopt;
    }
    socklen_t len = sizeof sin;
    ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&sin), &len);
    return ntohl(sin.sin_addr.s_addr);
}

} // namespace

int main(int argc, char** argv)
{
    relay::relay_config cfg;
    impi::CredentialFlags flags;
    std::optional<std::uint64_t> id, cluster, timeout;
    std::optional<std::string> net, wan_address, protection;
    std::string bad;
    auto whole = [&bad](const std::string& label, const std::string& text, std::uint64_t lo, std::uint64_t hi,
                     std::string_view unit = {}) {
        return hashi::parse_whole(label, text, {.lo = lo, .hi = hi, .unit = unit}, bad);
    };
    std::vector<std::string> positional;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        // GridMPI's single-dash options; the long form --opt and --opt=V
        // mean the same.
        auto [name, inline_value] = hashi::split_option(a);
        a = name;
        if (a == "-h" || a == "-help") {
            std::cout << usage;
            return 0;
        }
        if (a == "-v" || a == "-verbose") {
            cfg.verbose = true;
            continue;
        }
        if (!a.starts_with("-")) {
            positional.push_back(a);
            continue;
        }
        std::optional<std::string> v = inline_value;
        if (!v && i + 1 < argc) {
            v = std::string(argv[++i]);
        }
        if (!v) {
            return usage_error("option " + a + " needs a value");
        }
        std::optional<std::uint64_t> n;
        if (a == "-relay") {
            if (!(id = whole("option -relay", *v, 0, impi::max_relays_per_cluster - 1))) {
                return usage_error(bad);
            }
            // GridMPI's form: -relay ID server_addr:port.
            if (!inline_value && i + 1 < argc && argv[i + 1][0] != '-') {
                positional.push_back(argv[++i]);
            }
        } else if (a == "-cluster") {
            if (!(cluster = whole("option --cluster", *v, 0, impi::max_clients - 1))) {
                return usage_error(bad);
            }
        } else if (a == "-relays") {
            if (!(n = whole("option --relays", *v, 1, impi::max_relays_per_cluster, "relays"))) {
                return usage_error(bad);
            }
            cfg.count = static_cast<int>(*n);
        } else if (a == "-net") {
            net = *v;
        } else if (a == "-port" || a == "-wan-port") {
            if (!(n = whole("option " + a, *v, 0, 65535))) {
                return usage_error(bad);
            }
            (a == "-port" ? cfg.lan_port : cfg.wan_port) = static_cast<std::uint16_t>(*n);
        } else if (a == "-stats-dir") {
            cfg.stats_dir = *v;
        } else if (a == "-wan-address") {
            wan_address = *v;
        } else if (a == "-protection") {
            protection = *v;
        } else if (a == "-wan-rate") {
            if (!(n = whole("option --wan-rate", *v, 1, 4'000'000, "Mbit/s"))) {
                return usage_error(bad);
            }
            cfg.wan_rate = *n * 1'000'000 / 8;
        } else if (a == "-tcp-cc") {
            if (auto problem = fi::congestion_control_problem(*v, "--tcp-cc " + *v); !problem.empty()) {
                return usage_error(problem);
            }
            cfg.tcp_cc = *v;
        } else if (a == "-impi-secret-file") {
            flags.secret_file = *v;
        } else if (a == "-impi-secret") {
            flags.secret = *v;
        } else if (a == "-timeout") {
            if (!(timeout = whole("option -timeout", *v, 1, 24 * 3600, "seconds"))) {
                return usage_error(bad);
            }
        } else {
            return usage_error("unknown option '" + std::string(argv[i - (inline_value ? 0 : 1)]) + "'");
        }
    }
    if (!id) {
        return usage_error("say which relay this is with -relay ID (0 is the cluster's leader)");
    }
    if (positional.size() != 1) {
        return usage_error(positional.empty() ? "give impi-server's addr:port (impi-relay -relay ID addr:port)"
                                              : "unexpected argument '" + positional[1] + "'");
    }
    if (!cluster) {
        return usage_error("say which cluster this relay serves with --cluster K (its mpiexec's -client K)");
    }
    if (static_cast<int>(*id) >= cfg.count) {
        return usage_error("relay " + std::to_string(*id) + " does not exist in a cluster of --relays " +
            std::to_string(cfg.count) + " (0.." + std::to_string(cfg.count - 1) + ")");
    }
    cfg.id = static_cast<int>(*id);
    cfg.cluster = static_cast<int>(*cluster);
    cfg.server = positional[0];
    if (cfg.server.rfind(':') == std::string::npos) {
        return usage_error("'" + cfg.server + "' is not addr:port");
    }
    if (protection) {
        std::string e;
        auto p = secure::parse_protection(*protection, e);
        if (!p || *p == secure::protection::none) {
            return usage_error("--protection '" + *protection +
                "': trunks cross the WAN and are always protected; give integrity or encryption");
        }
        cfg.protection = *p;
    }
    if (auto order = hashi::env_text("IMPI_RELAY_TRUNK_ORDER"); order && !order->empty() && *order != "fair") {
        if (*order != "fifo") {
            return usage_error("IMPI_RELAY_TRUNK_ORDER=" + *order + ": use fair (the default) or fifo");
        }
        cfg.fifo_trunks = true;
    }
    // The LAN: an address of ours, or the network one of ours is in.
    const auto mine = own_addresses();
    int bits = 24;
    std::optional<std::uint32_t> want;
    if (net) {
        std::string text = *net;
        if (auto slash = text.find('/'); slash != std::string::npos) {
            auto b = whole("the prefix length of -net", text.substr(slash + 1), 8, 30);
            if (!b) {
                return usage_error(bad);
            }
            bits = static_cast<int>(*b);
            text.erase(slash);
        }
        want = parse_ipv4(text);
        if (!want) {
            return usage_error("-net '" + *net + "' is not an IPv4 address or network (A.B.C.D[/BITS])");
        }
    }
    const std::uint32_t mask = ~0u << (32 - bits);
    for (auto a : mine) {
        if (want ? (a & mask) == (*want & mask) : is_private(a)) {
            cfg.lan_ipv4 = a;
            break;
        }
    }
    if (cfg.lan_ipv4 == 0) {
        return usage_error(net ? "this host has no address in -net " + *net
                               : std::string("this host has no private address; say where the cluster's LAN is with -net"));
    }
    cfg.lan_mask = mask;
    cfg.lan_net = cfg.lan_ipv4 & mask;
    if (wan_address) {
        auto a = parse_ipv4(*wan_address);
        if (!a) {
            return usage_error("--wan-address '" + *wan_address + "' is not an IPv4 address");
        }
        cfg.wan_ipv4 = *a;
    } else if (auto a = address_towards(cfg.server)) {
        cfg.wan_ipv4 = *a;
    } else {
        return usage_error("cannot tell this host's WAN address towards " + cfg.server + "; give --wan-address");
    }
    if (!timeout) {
        if (auto t = hashi::env_text("HASHI_IMPI_TIMEOUT")) {
            if (!(timeout = whole("HASHI_IMPI_TIMEOUT=", *t, 1, 24 * 3600, "seconds"))) {
                return usage_error(bad);
            }
        }
    }
    if (timeout) {
        cfg.startup_timeout = std::chrono::seconds(*timeout);
    }
    if (auto sb = hashi::env_text("IMPI_RELAY_SOCBUF"); sb && !sb->empty()) {
        auto n = whole("IMPI_RELAY_SOCBUF=", *sb, 0, 1u << 30, "bytes");
        if (!n) {
            return usage_error(bad);
        }
        cfg.socket_buffer = static_cast<int>(*n);
    }
    try {
        cfg.credentials = impi::resolve_credentials(flags, hashi::env_value);
    } catch (const impi::CredentialError& e) {
        std::cerr << "impi-relay: error: " << e.what() << std::endl;
        return 2;
    }
    if (!cfg.credentials.secret) {
        return usage_error("a relay needs the job's secret (-impi-secret-file F, as impi-server's)");
    }

    int stop_fd = hashi::stop_signal_fd();
    if (stop_fd < 0) {
        std::cerr << "impi-relay: error: signalfd failed" << std::endl;
        return 1;
    }
    try {
        relay::daemon d(cfg);
        std::cout << d.listen() << std::endl;
        return d.run(stop_fd);
    } catch (const std::exception& e) {
        std::cerr << "impi-relay: error: " << e.what() << std::endl;
        return 1;
    }
}
