// SPDX-License-Identifier: BSD-3-Clause
#include "common/daemon_options.hpp"

#include <signal.h>
#include <sys/signalfd.h>

namespace hashi {

option_word split_option(std::string arg)
{
    option_word w;
    if (arg.starts_with("--") && arg.size() > 2) {
        arg.erase(0, 1);
        if (auto eq = arg.find('='); eq != std::string::npos) {
            w.inline_value = arg.substr(eq + 1);
            arg.erase(eq);
        }
    }
    w.name = std::move(arg);
    return w;
}

int stop_signal_fd()
{
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGHUP);
    ::signal(SIGPIPE, SIG_IGN);
    ::sigprocmask(SIG_BLOCK, &mask, nullptr);
    return ::signalfd(-1, &mask, SFD_CLOEXEC);
}

} // namespace hashi
