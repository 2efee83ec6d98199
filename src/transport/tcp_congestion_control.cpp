// SPDX-License-Identifier: BSD-3-Clause
#include "transport/tcp_congestion_control.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>

namespace hashi::fi {

std::string congestion_control_problem(const std::string& cc, const std::string& setting)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return {}; // nothing to learn here; a real socket reports it later
    const bool ok = ::setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc.data(), static_cast<socklen_t>(cc.size())) == 0;
    ::close(fd);
    if (ok)
        return {};
    std::string available;
    std::ifstream in("/proc/sys/net/ipv4/tcp_available_congestion_control");
    std::getline(in, available);
    // Available but not allowed (an unprivileged process may use only
    // net.ipv4.tcp_allowed_congestion_control's) fails the same way.
    return setting + ": the kernel offers no such TCP congestion control (available: " +
        (available.empty() ? std::string("unknown") : available) +
        "; without CAP_NET_ADMIN only those in net.ipv4.tcp_allowed_congestion_control); load its module (modprobe tcp_" + cc +
        ") or pick one of those";
}

} // namespace hashi::fi
