// SPDX-License-Identifier: BSD-3-Clause
#include "transport/engine/local_address.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ifaddrs.h>
#include <net/if.h>

namespace hashi::fi {

std::optional<std::uint32_t> choose_local_ipv4(std::string& error)
{
    const char* want = std::getenv("FI_HASHI_IFACE");
    if (want != nullptr && *want == '\0')
        want = nullptr;
    ifaddrs* list = nullptr;
    if (getifaddrs(&list) != 0) {
        error = std::string("cannot list network interfaces: ") + std::strerror(errno);
        return std::nullopt;
    }
    std::optional<std::uint32_t> found;
    for (ifaddrs* i = list; i != nullptr && !found; i = i->ifa_next) {
        if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET || (i->ifa_flags & IFF_UP) == 0)
            continue;
        if (want != nullptr ? std::strcmp(i->ifa_name, want) != 0 : (i->ifa_flags & IFF_LOOPBACK) != 0)
            continue;
        found = ntohl(reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr);
    }
    freeifaddrs(list);
    if (!found && want != nullptr) {
        error = std::string("FI_HASHI_IFACE=") + want +
            ": no such interface with an IPv4 address that is up (see `ip -4 addr`)";
        return std::nullopt;
    }
    if (!found)
        found = INADDR_LOOPBACK;
    return found;
}

} // namespace hashi::fi
