// SPDX-License-Identifier: BSD-3-Clause
// Whether this kernel lets a TCP socket use a congestion control by name,
// asked once at start-up so that a wrong name is an error that says what
// is there, not a warning per connection later. Shared by the provider
// (FI_HASHI_WAN_CC) and impi-relay (--tcp-cc).
#pragma once

#include <string>

namespace hashi::fi {

// Empty when `cc` is usable; otherwise why not, naming `setting` (how the
// user asked for it), the kernel's available ones, and what to do.
std::string congestion_control_problem(const std::string& cc, const std::string& setting);

} // namespace hashi::fi
