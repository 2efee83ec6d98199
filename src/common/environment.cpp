// SPDX-License-Identifier: BSD-3-Clause
#include "common/environment.hpp"

#include <cstdlib>

namespace hashi {

std::optional<std::string> env_value(const std::string& name)
{
    const char* v = std::getenv(name.c_str());
    return v != nullptr ? std::optional<std::string>(v) : std::nullopt;
}

std::optional<std::string> env_text(const char* name)
{
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' ? std::optional<std::string>(v) : std::nullopt;
}

std::optional<std::uint64_t> env_whole(
    const char* name, std::uint64_t fallback, const WholeRange& range, std::string& error)
{
    const auto text = env_text(name);
    if (!text)
        return fallback;
    return parse_whole(std::string(name) + "=", *text, range, error);
}

std::optional<bool> env_switch(const char* name, bool fallback, std::string& error)
{
    const auto text = env_text(name);
    if (!text)
        return fallback;
    return parse_switch(std::string(name) + "=", *text, error);
}

} // namespace hashi
