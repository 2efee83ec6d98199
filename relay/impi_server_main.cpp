// SPDX-License-Identifier: BSD-3-Clause
// impi-server: the rendezvous of a federated job (relay/README.md). Prints
// the address clients use, runs the IMPI startup and Hashi's PMI barriers,
// and exits when every client sent FINI (0) or the job failed (1).
#include "common/daemon_options.hpp"
#include "common/environment.hpp"
#include "config.h"
#include "relay/server/server.hpp"


#include <cstdlib>
#include <iostream>
#include <set>

using namespace hashi::impi;

namespace {

constexpr std::uint64_t max_timeout = 24 * 3600;

const char* usage = R"(Usage: impi-server -server N [options]

Starts the rendezvous of a job that spans N clusters (N = 1..32), prints
addr:port on its first line, and waits for `mpiexec -client K addr:port ...`
from each cluster (K = 0..N-1). Exits 0 when every cluster finished, 1 when
the job failed, 2 on a usage error.

Options:
  -server N             number of clients (clusters) in the job
  -host ADDR            listen on this address only, IPv4 or IPv6 (default:
                        every IPv4 address; the first non-loopback one is
                        printed)
  -port P               listen on port P (default: any free port)
  -timeout SEC          every client must join and finish the startup within
                        SEC seconds (default 60; also HASHI_IMPI_TIMEOUT)

Connections that have not joined yet (anyone can open them):
  -auth-timeout SEC     each must authenticate and join within SEC seconds,
                        else it is closed (default 5; 1..600)
  -max-unauth N         at most N unauthenticated at a time (default 64): a
                        new one evicts the oldest of the address holding the
                        most, it is not refused
  -max-unauth-per-source N
                        at most N of them from one address (default 8): a
                        new one evicts that address's oldest
  -impi-secret-file F   the job's secret (Hashi's HMAC-SHA256 challenge-
                        response); also HASHI_IMPI_SECRET_FILE, or the secret
                        itself in HASHI_IMPI_SECRET
  -impi-secret S        the secret on the command line (visible to other
                        users in ps; prefer the file)
  -impi-auth-key        also accept IMPI_AUTH_KEY (a 64-bit key sent in the
                        clear): the key from -impi-key N or IMPI_AUTH_KEY
  -impi-auth-none       also accept clients without authentication
  -v, -verbose          log joins, the end of the startup and FINIs
  -h, -help             print this help

Every option may also be written with two dashes, and with its value after
'=' (--host=ADDR).
)";

} // namespace

int main(int argc, char** argv)
{
    ServerConfig cfg;
    CredentialFlags flags;
    std::optional<std::uint64_t> nclients;
    std::optional<std::uint64_t> timeout;
    auto usage_error = [](const std::string& what) {
        std::cerr << "impi-server: error: " << what << " (impi-server -help lists the options)" << std::endl;
        return 2;
    };
    // What the last number that did not parse was wrong with.
    std::string bad;
    auto whole = [&bad](const std::string& label, const std::string& text, std::uint64_t lo, std::uint64_t hi,
                     std::string_view unit = {}) {
        return hashi::parse_whole(label, text, {.lo = lo, .hi = hi, .unit = unit}, bad);
    };
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        // GridMPI's single-dash options; the long form --opt and --opt=V
        // mean the same.
        auto [name, inline_value] = hashi::split_option(a);
        a = name;
        auto value = [&]() -> std::optional<std::string> {
            if (inline_value) {
                return inline_value;
            }
            if (i + 1 >= argc) {
                return std::nullopt;
            }
            return std::string(argv[++i]);
        };
        bool flag = a == "-h" || a == "-help" || a == "-v" || a == "-verbose" || a == "-impi-auth-none" ||
            a == "-impi-auth-key";
        if (flag && inline_value) {
            return usage_error("option " + a + " takes no value");
        }
        if (a == "-h" || a == "-help") {
            std::cout << usage;
            return 0;
        }
        if (a == "-v" || a == "-verbose") {
            cfg.verbose = true;
            continue;
        }
        if (a == "-impi-auth-none") {
            flags.enable_none = true;
            continue;
        }
        if (a == "-impi-auth-key") {
            flags.enable_key = true;
            continue;
        }
        static const std::set<std::string> with_value = {"-server", "-host", "-port", "-timeout", "-auth-timeout",
            "-max-unauth", "-max-unauth-per-source", "-impi-secret-file", "-impi-secret", "-impi-key"};
        if (!with_value.contains(a)) {
            return usage_error("unknown option '" + std::string(argv[i]) + "'");
        }
        auto v = value();
        if (!v) {
            return usage_error("option " + a + " needs a value");
        }
        if (a == "-server") {
            nclients = whole("option -server", *v, 1, max_clients, "clients");
            if (!nclients) {
                return usage_error(bad);
            }
        } else if (a == "-host") {
            cfg.host = *v;
        } else if (a == "-port") {
            auto p = whole("option -port", *v, 0, 65535);
            if (!p) {
                return usage_error(bad);
            }
            cfg.port = static_cast<std::uint16_t>(*p);
        } else if (a == "-timeout") {
            timeout = whole("option -timeout", *v, 1, max_timeout, "seconds");
            if (!timeout) {
                return usage_error(bad);
            }
        } else if (a == "-auth-timeout") {
            auto t = whole("option -auth-timeout", *v, 1, 600, "seconds");
            if (!t) {
                return usage_error(bad);
            }
            cfg.admission.deadline = std::chrono::seconds(*t);
        } else if (a == "-max-unauth" || a == "-max-unauth-per-source") {
            auto n = whole("option " + a, *v, 1, 4096, "connections");
            if (!n) {
                return usage_error(bad);
            }
            (a == "-max-unauth" ? cfg.admission.total : cfg.admission.per_source) = static_cast<std::size_t>(*n);
        } else if (a == "-impi-secret-file") {
            flags.secret_file = *v;
        } else if (a == "-impi-secret") {
            flags.secret = *v;
        } else if (a == "-impi-key") {
            flags.key = *v;
        } else {
            return usage_error("unknown option '" + a + "'");
        }
    }
    if (!nclients) {
        return usage_error("say how many clients the job has with -server N");
    }
    cfg.nclients = static_cast<std::uint32_t>(*nclients);
    if (!timeout) {
        if (auto t = hashi::env_text("HASHI_IMPI_TIMEOUT")) {
            timeout = whole("HASHI_IMPI_TIMEOUT=", *t, 1, max_timeout, "seconds");
            if (!timeout) {
                return usage_error(bad);
            }
        }
    }
    if (timeout) {
        cfg.startup_timeout = std::chrono::seconds(*timeout);
    }
    try {
        cfg.credentials = resolve_credentials(flags, hashi::env_value);
    } catch (const CredentialError& e) {
        std::cerr << "impi-server: error: " << e.what() << std::endl;
        return 2;
    }

    // SIGINT and SIGTERM end the job cleanly (clients are told why);
    // SIGPIPE from a vanished client is an error code, not our death.
    int stop_fd = hashi::stop_signal_fd();
    if (stop_fd < 0) {
        std::cerr << "impi-server: error: signalfd failed" << std::endl;
        return 1;
    }
    try {
        Server server(cfg);
        std::cout << server.listen() << std::endl;
        return server.run(stop_fd);
    } catch (const std::exception& e) {
        std::cerr << "impi-server: error: " << e.what() << std::endl;
        return 1;
    }
}
