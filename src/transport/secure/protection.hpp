// SPDX-License-Identifier: BSD-3-Clause
// How much protection the bytes of a connection between clusters get, as a
// user asks for it in FI_HASHI_WAN_PROTECTION. Inside a cluster the network
// is trusted and connections stay plain; across clusters the path layer
// opens the byte stream this setting names (open_stream.hpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace hashi::secure {

enum class protection {
    none, // plain TCP after the authenticated handshake
    integrity, // every record authenticated (integrity_stream): no change goes unnoticed, bytes readable
    encryption, // TLS 1.3 (tls_stream): authenticated and confidential
};

inline constexpr const char* protection_variable = "FI_HASHI_WAN_PROTECTION";

// The default across clusters, from bench/secure's figures: integrity costs
// under a microsecond per message and a fifth of a core per side at 10 Gb/s,
// and stops changes and injection after the handshake; encryption costs
// twice that and is on request (bench/secure/README.md).
inline constexpr protection default_wan_protection = protection::integrity;

// "none", "integrity" or "encryption" (exactly, lower case). Anything else
// is nullopt, with `error` naming the variable, the value and the accepted
// values.
std::optional<protection> parse_protection(std::string_view value, std::string& error);

// From FI_HASHI_WAN_PROTECTION, `fallback` when it is unset or empty.
std::optional<protection> protection_from_environment(protection fallback, std::string& error);

const char* protection_name(protection p) noexcept;

} // namespace hashi::secure
