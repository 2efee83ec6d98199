// SPDX-License-Identifier: BSD-3-Clause
// What Hashi's daemons (impi-server, impi-relay) share at start-up: the
// GridMPI-style options (single dash, with --opt, --opt=V as synonyms) and
// the signals that stop them cleanly.
#pragma once

#include <optional>
#include <string>

namespace hashi {

// "-port" stays "-port"; "--port" and "--port=4000" become "-port", the
// latter with the inline value "4000". A lone "-" or "--" is left as it is.
struct option_word {
    std::string name;
    std::optional<std::string> inline_value;
};
option_word split_option(std::string arg);

// Blocks SIGINT, SIGTERM and SIGHUP and returns a signalfd that becomes
// readable when one comes (the daemon's loop then ends the job cleanly and
// says why), and ignores SIGPIPE (a peer that vanished is an error code on
// its socket, not the daemon's death). -1 when signalfd fails.
int stop_signal_fd();

} // namespace hashi
