// SPDX-License-Identifier: BSD-3-Clause
#include "transport/secure/protection.hpp"

#include <cstdlib>

namespace hashi::secure {

std::optional<protection> parse_protection(std::string_view value, std::string& error)
{
    for (const protection p : {protection::none, protection::integrity, protection::encryption})
        if (value == protection_name(p))
            return p;
    // The value is not a secret, so it is quoted: a typo is then obvious.
    error = std::string(protection_variable) + "='" + std::string(value) +
        "' is not a protection level; accepted values: none, integrity, encryption";
    return std::nullopt;
}

std::optional<protection> protection_from_environment(protection fallback, std::string& error)
{
    const char* v = std::getenv(protection_variable);
    if (v == nullptr || *v == '\0')
        return fallback;
    return parse_protection(v, error);
}

const char* protection_name(protection p) noexcept
{
    switch (p) {
    case protection::none:
        return "none";
    case protection::integrity:
        return "integrity";
    case protection::encryption:
        return "encryption";
    }
    return "unknown";
}

} // namespace hashi::secure
