// SPDX-License-Identifier: BSD-3-Clause
#include "pmi_listener.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <stdexcept>

namespace hashi::mpiexec {
namespace {

std::optional<in_addr> resolve_ipv4(const std::string& name)
{
    addrinfo hints {};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    if (::getaddrinfo(name.c_str(), nullptr, &hints, &res) != 0 || res == nullptr) {
        return std::nullopt;
    }
    in_addr a = reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr;
    ::freeaddrinfo(res);
    return a;
}

// The local address the kernel picks to reach `host` (a UDP connect sends
// nothing).
std::optional<in_addr> source_address_towards(const std::string& host)
{
    auto dest = resolve_ipv4(host);
    if (!dest) {
        return std::nullopt;
    }
    UniqueFd s(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    sockaddr_in to {};
    to.sin_family = AF_INET;
    to.sin_port = htons(9);
    to.sin_addr = *dest;
    sockaddr_in me {};
    socklen_t len = sizeof me;
    if (!s || ::connect(s.get(), reinterpret_cast<sockaddr*>(&to), sizeof to) != 0 ||
        ::getsockname(s.get(), reinterpret_cast<sockaddr*>(&me), &len) != 0) {
        return std::nullopt;
    }
    return me.sin_addr;
}

std::string dotted(in_addr a)
{
    char buf[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &a, buf, sizeof buf);
    return buf;
}

} // namespace

PmiListener open_pmi_listener(const std::optional<std::string>& pmi_host, const std::optional<std::string>& bind_addr,
    const std::vector<std::string>& remote_hosts, const std::string& local_name)
{
    in_addr any {};
    any.s_addr = htonl(INADDR_ANY);
    in_addr addr = any;
    std::string advertised_host = local_name;
    if (bind_addr) {
        if (::inet_pton(AF_INET, bind_addr->c_str(), &addr) != 1) {
            throw std::runtime_error("HASHI_PMI_BIND='" + *bind_addr + "' is not an IPv4 address (use 0.0.0.0 for every interface)");
        }
    }
    if (pmi_host) {
        advertised_host = *pmi_host;
        if (!bind_addr) {
            auto a = resolve_ipv4(*pmi_host);
            if (!a) {
                throw std::runtime_error("HASHI_PMI_HOST='" + *pmi_host +
                    "' does not resolve to an IPv4 address here; set it to this host's address as the remote hosts reach it");
            }
            addr = *a;
        }
    } else if (!bind_addr) {
        std::set<in_addr_t> sources;
        bool all_known = !remote_hosts.empty();
        for (const auto& h : remote_hosts) {
            auto a = source_address_towards(h);
            if (!a) {
                all_known = false; // e.g. a name only ssh_config knows
                break;
            }
            sources.insert(a->s_addr);
        }
        if (all_known && sources.size() == 1) {
            addr.s_addr = *sources.begin();
            advertised_host = dotted(addr);
        }
    }

    PmiListener l;
    l.fd.reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in sa {};
    sa.sin_family = AF_INET;
    sa.sin_addr = addr;
    socklen_t len = sizeof sa;
    if (!l.fd || ::bind(l.fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 ||
        ::listen(l.fd.get(), 1024) != 0 || ::getsockname(l.fd.get(), reinterpret_cast<sockaddr*>(&sa), &len) != 0) {
        throw std::runtime_error("cannot open the PMI port for ssh-launched processes on " + dotted(addr) + ": " +
            std::strerror(errno) +
            (errno == EADDRNOTAVAIL ? " (HASHI_PMI_HOST names another host; set HASHI_PMI_BIND to a local address)"
                                    : ""));
    }
    std::string port = std::to_string(ntohs(sa.sin_port));
    l.advertised = advertised_host + ":" + port;
    l.bound = dotted(sa.sin_addr) + ":" + port;
    return l;
}

} // namespace hashi::mpiexec
