// SPDX-License-Identifier: BSD-3-Clause
// The local relay set: the impi-relay daemons on this cluster's gateways
// through which a rank of a cluster behind relays reaches other clusters.
//
// mpiexec gives the ranks of such a cluster HASHI_RELAYS, a comma-separated
// list of 1 to 8 `A.B.C.D:PORT` entries; the entry's index is the relay's
// number (its trunk: relay t of one cluster is linked to relay t of every
// other). The TCP port takes the route handshake (wire/relay_route.hpp),
// the UDP port of the same number the liveness envelopes. This file is the
// one place the variable is read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hashi::fi {

inline constexpr const char* relays_variable = "HASHI_RELAYS";
inline constexpr std::size_t max_relays = 8;

struct relay_endpoint {
    std::uint32_t ipv4 = 0; // host order
    std::uint16_t port = 0;
    // "10.0.0.1:7000", for messages.
    std::string describe() const;
    bool operator==(const relay_endpoint&) const = default;
};

// The relays in `text` (HASHI_RELAYS's syntax), in order. nullopt with
// `error` naming the variable, the entry (its number and text) and what is
// wrong with it when `text` is malformed. Empty text is no relay at all.
std::optional<std::vector<relay_endpoint>> parse_relays(std::string_view text, std::string& error);

// parse_relays of HASHI_RELAYS; no relay when it is unset or empty.
std::optional<std::vector<relay_endpoint>> relays_from_environment(std::string& error);

} // namespace hashi::fi
