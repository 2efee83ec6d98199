// SPDX-License-Identifier: BSD-3-Clause
// hashi-delayline: joins two taps in two network namespaces and delays
// every frame by a fixed time, one thread per direction. The testbed puts
// one on each WAN link, since the host kernel has tbf but no netem.
#include "forwarder.hpp"
#include "options.hpp"
#include "stats_file.hpp"
#include "tap.hpp"

#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <mutex>
#include <sched.h>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace hashi::delayline {
namespace {

// Signals main waits for; SIGUSR1 is how a failed direction wakes it,
// SIGUSR2 asks for a snapshot of the counts (--stats-file).
sigset_t control_signals()
{
    sigset_t set;
    sigemptyset(&set);
    for (int s : {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2}) {
        sigaddset(&set, s);
    }
    return set;
}

void print_stats(const Forwarder& f)
{
    const DirectionStats& s = f.stats();
    (void)std::fprintf(stderr,
        "hashi-delayline: %s: %llu frames, %llu bytes forwarded; %llu frames (%llu bytes) dropped because the "
        "queue was full; %llu frames (%llu bytes) lost at random; %llu refused by the output tap; peak queue %llu "
        "bytes\n",
        f.name().c_str(), static_cast<unsigned long long>(s.frames.get()),
        static_cast<unsigned long long>(s.bytes.get()), static_cast<unsigned long long>(s.dropped_frames.get()),
        static_cast<unsigned long long>(s.dropped_bytes.get()), static_cast<unsigned long long>(s.lost_frames.get()),
        static_cast<unsigned long long>(s.lost_bytes.get()), static_cast<unsigned long long>(s.write_errors.get()),
        static_cast<unsigned long long>(s.peak_queue_bytes.get()));
}

// Threads inherit the policy, so it is set before they start. The delay
// lines sleep while idle and need little CPU under load, so a real-time
// priority costs others little and takes scheduling delays (several ms on a
// loaded 2-core machine) out of the emulated WAN's delay.
void use_realtime_priority()
{
    sched_param param {};
    param.sched_priority = 10;
    if (::sched_setscheduler(0, SCHED_FIFO, &param) != 0) {
        std::cerr << "hashi-delayline: warning: cannot use real-time priority (" << std::strerror(errno)
                  << "); running at normal priority, delays may vary more under load" << std::endl;
    }
}

int run(const Options& opt)
{
    // Blocked before any thread starts, so only sigwait below sees them.
    const sigset_t signals = control_signals();
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    if (opt.realtime) {
        use_realtime_priority();
    }
    // Wake-ups land within a microsecond of the due time instead of the
    // default 50 us slack; threads inherit the setting.
    ::prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);

    UniqueFd tap_a = open_tap(opt.a);
    UniqueFd tap_b = open_tap(opt.b);
    UniqueFd stop(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!stop) {
        throw std::system_error(errno, std::generic_category(), "eventfd");
    }
    Forwarder a_to_b(opt.a.describe() + " -> " + opt.b.describe(), tap_a.get(), tap_b.get(), stop.get(), opt.delay,
        opt.queue_bytes, {.probability = opt.loss, .seed = opt.seed});
    Forwarder b_to_a(
        opt.b.describe() + " -> " + opt.a.describe(), tap_b.get(), tap_a.get(), stop.get(), opt.delay, opt.queue_bytes);

    std::mutex error_mutex;
    std::string error;
    auto drive = [&](Forwarder& f) {
        try {
            f.run();
        } catch (const std::exception& e) {
            const std::scoped_lock lock(error_mutex);
            if (error.empty()) {
                error = e.what();
            }
            ::kill(::getpid(), SIGUSR1);
        }
    };
    std::thread first(drive, std::ref(a_to_b));
    std::thread second(drive, std::ref(b_to_a));
    std::cout << "ready" << std::endl;

    const std::vector<NamedDirection> directions {
        {"a_to_b", opt.a.describe(), opt.b.describe(), &a_to_b.stats()},
        {"b_to_a", opt.b.describe(), opt.a.describe(), &b_to_a.stats()},
    };
    std::uint64_t snapshots = 0;
    int sig = 0;
    while (sigwait(&signals, &sig) == 0 && sig == SIGUSR2) {
        if (opt.stats_file.empty()) {
            continue;
        }
        try {
            write_stats_file(opt.stats_file, ++snapshots, directions);
        } catch (const std::exception& e) {
            // The WAN keeps working; only the snapshot is missing.
            std::cerr << "hashi-delayline: " << e.what() << std::endl;
        }
    }
    const std::uint64_t one = 1;
    (void)!::write(stop.get(), &one, sizeof one);
    first.join();
    second.join();
    print_stats(a_to_b);
    print_stats(b_to_a);
    if (!error.empty()) {
        std::cerr << "hashi-delayline: stopped: " << error << std::endl;
        return 1;
    }
    return 0;
}

} // namespace
} // namespace hashi::delayline

int main(int argc, char** argv)
{
    using namespace hashi::delayline;
    try {
        const Options opt = parse_options(argc, argv);
        if (opt.help) {
            std::cout << usage_text();
            return 0;
        }
        return run(opt);
    } catch (const UsageError& e) {
        std::cerr << "hashi-delayline: " << e.what() << "\n(hashi-delayline --help shows the usage)" << std::endl;
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "hashi-delayline: " << e.what() << std::endl;
        return 1;
    }
}
