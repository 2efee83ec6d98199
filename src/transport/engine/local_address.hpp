// SPDX-License-Identifier: BSD-3-Clause
// Which IPv4 address an endpoint advertises in its business card, and the
// other per-process settings read from the environment.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace hashi::fi {

// FI_HASHI_IFACE=<name> picks the interface; otherwise the first interface
// that is up, not loopback, with an IPv4 address; otherwise 127.0.0.1 (a
// single-host job). On error, `error` says what was wrong.
std::optional<std::uint32_t> choose_local_ipv4(std::string& error);

// Reads an unsigned integer environment variable within [0, max]; `fallback`
// when unset. On a malformed value, `error` names the variable and the value.
std::optional<std::uint64_t> env_unsigned(
    const char* name, std::uint64_t fallback, std::uint64_t max, int base, std::string& error);

} // namespace hashi::fi
