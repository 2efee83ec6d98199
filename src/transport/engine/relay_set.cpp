// SPDX-License-Identifier: BSD-3-Clause
// HASHI_RELAYS (relay_set.hpp).
#include "transport/engine/relay_set.hpp"

#include "common/environment.hpp"
#include "common/number_text.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

namespace hashi::fi {

namespace {

// The host part of an entry: strictly four decimal numbers 0..255 (what
// inet_pton accepts), one host, not a wildcard or broadcast.
std::optional<std::uint32_t> relay_ipv4(std::string_view host, std::string& why)
{
    const std::string h(host);
    in_addr in {};
    if (h.empty() || ::inet_pton(AF_INET, h.c_str(), &in) != 1) {
        why = "'" + h + "' is not an IPv4 address (four numbers 0 to 255, as 10.0.0.1; no host names)";
        return std::nullopt;
    }
    const std::uint32_t a = ntohl(in.s_addr);
    if (a == 0 || a == 0xffffffffu || (a >> 28) == 0xe) {
        why = "'" + h + "' is not the address of one host (0.0.0.0, broadcast and multicast addresses are not)";
        return std::nullopt;
    }
    return a;
}

} // namespace

std::string relay_endpoint::describe() const
{
    char ip[INET_ADDRSTRLEN] = "?";
    in_addr in {};
    in.s_addr = htonl(ipv4);
    ::inet_ntop(AF_INET, &in, ip, sizeof ip);
    return std::string(ip) + ":" + std::to_string(port);
}

std::optional<std::vector<relay_endpoint>> parse_relays(std::string_view text, std::string& error)
{
    std::vector<relay_endpoint> out;
    if (text.empty())
        return out;
    const std::string whole = std::string(relays_variable) + "='" + std::string(text) + "'";
    const std::string hint = " (HASHI_RELAYS is set by Hashi's mpiexec for the ranks of a cluster behind "
                             "impi-relay: a comma-separated list of 1 to " +
        std::to_string(max_relays) + " relays A.B.C.D:PORT)";
    std::size_t start = 0;
    for (std::size_t number = 1;; ++number) {
        const std::size_t comma = text.find(',', start);
        const std::string_view entry =
            text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
        const std::string which = whole + ": entry " + std::to_string(number) + " ('" + std::string(entry) + "')";
        if (number > max_relays) {
            error = whole + " names more than " + std::to_string(max_relays) + " relays" + hint;
            return std::nullopt;
        }
        if (entry.empty()) {
            error = which + " is empty (two commas in a row, or one at an end)" + hint;
            return std::nullopt;
        }
        const std::size_t colon = entry.find(':');
        if (colon == std::string_view::npos) {
            error = which + " has no ':PORT'" + hint;
            return std::nullopt;
        }
        std::string why;
        const auto ip = relay_ipv4(entry.substr(0, colon), why);
        if (!ip) {
            error = which + ": " + why + hint;
            return std::nullopt;
        }
        const auto port = hashi::parse_whole("port", entry.substr(colon + 1), {.lo = 1, .hi = 65535}, why);
        if (!port) {
            error = which + ": " + why + hint;
            return std::nullopt;
        }
        const relay_endpoint r {*ip, static_cast<std::uint16_t>(*port)};
        for (std::size_t i = 0; i < out.size(); ++i)
            if (out[i] == r) {
                error = which + " is the same relay as entry " + std::to_string(i + 1) +
                    " (each relay is one trunk; name it once)" + hint;
                return std::nullopt;
            }
        out.push_back(r);
        if (comma == std::string_view::npos)
            return out;
        start = comma + 1;
    }
}

std::optional<std::vector<relay_endpoint>> relays_from_environment(std::string& error)
{
    const auto v = hashi::env_text(relays_variable);
    if (!v)
        return std::vector<relay_endpoint> {};
    return parse_relays(*v, error);
}

} // namespace hashi::fi
