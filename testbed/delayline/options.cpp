// SPDX-License-Identifier: BSD-3-Clause
#include "options.hpp"

#include "common/number_text.hpp"

#include <cmath>
#include <net/if.h>
#include <string_view>
#include <vector>

namespace hashi::delayline {
namespace {

constexpr double max_delay_ms = 60'000;
constexpr std::uint64_t max_queue_mb = 4096;

double parse_delay_ms(std::string_view text)
{
    std::string error;
    const auto ms = parse_decimal("DELAY_MS", text,
        {.lo = 0, .hi = max_delay_ms, .unit = "milliseconds", .note = "fractions allowed, e.g. 2.5"}, error);
    if (!ms) {
        throw UsageError(error);
    }
    return *ms;
}

std::size_t parse_queue_mb(std::string_view text)
{
    std::string error;
    const auto mb = parse_whole("--queue-mb", text, {.lo = 1, .hi = max_queue_mb, .unit = "MiB"}, error);
    if (!mb) {
        throw UsageError(error);
    }
    return static_cast<std::size_t>(*mb) << 20;
}

double parse_loss(std::string_view text)
{
    std::string error;
    const auto p = parse_decimal("--loss", text,
        {.lo = 0, .hi = 1, .unit = "", .note = "a probability, e.g. 0.01 for 1 % of the frames"}, error);
    if (!p) {
        throw UsageError(error);
    }
    return *p;
}

std::uint64_t parse_seed(std::string_view text)
{
    std::string error;
    const auto seed = parse_whole("--seed", text, {}, error);
    if (!seed) {
        throw UsageError(error);
    }
    return *seed;
}

TapEnd parse_end(std::string_view netns, std::string_view ifname, const char* which)
{
    if (netns.empty()) {
        throw UsageError(std::string("NETNS_") + which + " is empty");
    }
    // The kernel silently truncates longer names; then the tap would not
    // be the interface the caller configures.
    if (ifname.empty() || ifname.size() >= IFNAMSIZ || ifname.find('/') != std::string_view::npos) {
        throw UsageError(std::string("IFACE_") + which + " '" + std::string(ifname) +
            "' is not an interface name (1 to 15 characters, no '/')");
    }
    return {std::string(netns), std::string(ifname)};
}

} // namespace

Options parse_options(int argc, char** argv)
{
    Options opt;
    std::vector<std::string_view> positional;
    for (int i = 1; i < argc; ++i) {
        std::string_view a = argv[i];
        if (a == "-h" || a == "--help") {
            opt.help = true;
            return opt;
        }
        if (a == "--realtime") {
            opt.realtime = true;
        } else if (a == "--queue-mb") {
            if (i + 1 >= argc) {
                throw UsageError("--queue-mb needs a value (MiB of frames queued per direction)");
            }
            opt.queue_bytes = parse_queue_mb(argv[++i]);
        } else if (a.starts_with("--queue-mb=")) {
            opt.queue_bytes = parse_queue_mb(a.substr(a.find('=') + 1));
        } else if (a == "--loss" || a == "--seed" || a == "--stats-file") {
            if (i + 1 >= argc) {
                throw UsageError(std::string(a) + " needs a value");
            }
            const std::string_view value = argv[++i];
            if (a == "--loss") {
                opt.loss = parse_loss(value);
            } else if (a == "--seed") {
                opt.seed = parse_seed(value);
            } else if (value.empty()) {
                throw UsageError("--stats-file needs a path");
            } else {
                opt.stats_file = value;
            }
        } else if (a.starts_with("-") && a.size() > 1) {
            throw UsageError("unknown option '" + std::string(a) + "'");
        } else {
            positional.push_back(a);
        }
    }
    if (positional.size() != 5) {
        throw UsageError("expected 5 arguments (NETNS_A IFACE_A NETNS_B IFACE_B DELAY_MS), got " +
            std::to_string(positional.size()));
    }
    opt.a = parse_end(positional[0], positional[1], "A");
    opt.b = parse_end(positional[2], positional[3], "B");
    if (opt.a.netns == opt.b.netns && opt.a.ifname == opt.b.ifname) {
        throw UsageError("both ends are " + opt.a.describe() + "; name two different taps");
    }
    opt.delay = std::chrono::nanoseconds(std::llround(parse_delay_ms(positional[4]) * 1e6));
    return opt;
}

std::string usage_text()
{
    return R"(Usage: hashi-delayline [--queue-mb N] [--realtime] [--loss P [--seed N]] [--stats-file PATH] NETNS_A IFACE_A NETNS_B IFACE_B DELAY_MS

Creates tap IFACE_A in network namespace NETNS_A and tap IFACE_B in NETNS_B
and forwards every Ethernet frame from one to the other DELAY_MS later (one
way, in each direction), in order. A stand-in for `tc netem delay` on
kernels without netem; rate limits belong to tbf on the taps.

  NETNS_x        a name under /run/netns (as `ip netns add` makes) or a path
  IFACE_x        name of the tap to create (at most 15 characters)
  DELAY_MS       one-way delay in milliseconds, 0 to 60000, fractions allowed
  --queue-mb N   frames held per direction, in MiB (default 32); frames that
                 arrive when it is full are dropped, counted and logged
  --loss P       drop each frame going from A to B with probability P (0 to 1),
                 independently (Bernoulli), counted apart from queue overflow;
                 frames from B to A are never dropped at random
  --seed N       seed of the loss decisions (default 1): the same seed and the
                 same frames give the same losses
  --stats-file PATH
                 on SIGUSR2, write the per-direction counts to PATH (replaced
                 atomically: KEY=VALUE lines, one direction per line)
  --realtime     forward at real-time priority (SCHED_FIFO 10), so frames
                 leave on time even when every core is busy; without the
                 privilege it warns and runs at normal priority

Prints "ready" on stdout once both taps exist. The taps disappear when the
program exits; SIGTERM or SIGINT stops it and prints per-direction counts.
Needs CAP_NET_ADMIN and CAP_SYS_ADMIN (root) to enter the namespaces.
)";
}

} // namespace hashi::delayline
