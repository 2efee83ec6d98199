// SPDX-License-Identifier: BSD-3-Clause
// The transport keeps its sockets to itself (the provider is a module that
// libfabric loaded), but they are this process's file descriptors: the
// probe finds them in /proc/self/fd and reads TCP_INFO, which changes
// nothing on a socket. A descriptor that is not a TCP socket fails
// getsockopt and is skipped. Connections inside a cluster are counted too;
// during the probe's WAN burst they carry nothing.
#include "tcp_retransmits.hpp"

#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace hashi::coll {

std::optional<std::uint64_t> process_tcp_retransmits()
{
    DIR* dir = opendir("/proc/self/fd");
    if (dir == nullptr)
        return std::nullopt;
    const int own = dirfd(dir);
    std::uint64_t total = 0;
    while (const dirent* e = readdir(dir)) {
        char* end = nullptr;
        const long fd = std::strtol(e->d_name, &end, 10);
        if (end == e->d_name || *end != '\0' || fd == own)
            continue;
        tcp_info info {};
        socklen_t len = sizeof info;
        // Only TCP sockets answer; everything else is ENOTSOCK or
        // EOPNOTSUPP. A kernel with a shorter tcp_info leaves the rest 0.
        if (getsockopt(static_cast<int>(fd), IPPROTO_TCP, TCP_INFO, &info, &len) == 0 &&
            len >= offsetof(tcp_info, tcpi_total_retrans) + sizeof info.tcpi_total_retrans)
            total += info.tcpi_total_retrans;
    }
    closedir(dir);
    return total;
}

} // namespace hashi::coll
