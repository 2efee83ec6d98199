// SPDX-License-Identifier: BSD-3-Clause
// Which IPv4 address an endpoint advertises in its business card (numeric
// settings are read with common/environment.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace hashi::fi {

// FI_HASHI_IFACE=<name> picks the interface; otherwise the first interface
// that is up, not loopback, with an IPv4 address; otherwise 127.0.0.1 (a
// single-host job). On error, `error` says what was wrong.
std::optional<std::uint32_t> choose_local_ipv4(std::string& error);


} // namespace hashi::fi
