// SPDX-License-Identifier: BSD-3-Clause
#include "mpi/info/stats_watch.hpp"

#include "mpi/info/stats_summary.hpp"

#include <signal.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <optional>
#include <ostream>
#include <sstream>

namespace hashi {

int watch_stats(const WatchSettings& settings, std::ostream& out, std::ostream& err)
{
    std::error_code ec;
    if (!std::filesystem::is_directory(settings.dir, ec)) {
        err << "hashi-info: --stats " << settings.dir
            << ": not a directory (create it, then run the job with FI_HASHI_STATS_DIR=" << settings.dir << ")\n";
        return 1;
    }
    // The signals that end the watch are waited for between refreshes, so
    // it ends cleanly (exit 0) rather than dying mid-line.
    sigset_t stop;
    sigemptyset(&stop);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
        sigaddset(&stop, sig);
    }
    sigprocmask(SIG_BLOCK, &stop, nullptr);
    const auto period = std::chrono::duration<double>(settings.interval_s);
    timespec wait {};
    wait.tv_sec = static_cast<time_t>(std::floor(settings.interval_s));
    wait.tv_nsec = static_cast<long>((settings.interval_s - std::floor(settings.interval_s)) * 1e9);

    std::optional<StatsSnapshot> before;
    auto before_at = std::chrono::steady_clock::now();
    for (long round = 1;; ++round) {
        std::ostringstream page;
        const std::time_t wall = std::time(nullptr);
        std::tm local {};
        localtime_r(&wall, &local);
        page << "hashi-info --stats " << settings.dir << " --watch: " << std::put_time(&local, "%H:%M:%S") << ", every "
             << period.count() << " s" << (settings.count == 0 ? " (Ctrl-C ends)" : "") << "\n";
        std::string error;
        auto now = read_stats_dir(settings.dir, error);
        const auto now_at = std::chrono::steady_clock::now();
        if (now) {
            const double seconds = std::chrono::duration<double>(now_at - before_at).count();
            if (settings.view == StatsView::tcp)
                print_tcp_table(*now, page);
            else
                print_stats_table(*now, page, before ? &*before : nullptr, seconds);
            before = std::move(now);
            before_at = now_at;
        } else if (error.find("not a statistics line") != std::string::npos) {
            err << error << "\n";
            return 1;
        } else {
            // The job has not written its first files yet.
            page << "waiting for the ranks' statistics: " << error << "\n";
        }
        print_relay_trunks(settings.dir, page);
        out << (settings.in_place ? "\033[H\033[2J" : (round > 1 ? "\n" : "")) << page.str() << std::flush;
        if (settings.count != 0 && round >= settings.count) {
            return 0;
        }
        if (sigtimedwait(&stop, nullptr, &wait) > 0) {
            return 0;
        }
    }
}

} // namespace hashi
