// SPDX-License-Identifier: BSD-3-Clause
// Settings read from the environment, with the forms and messages of
// number_text.hpp: every variable is named in its error with the bad value
// and what is accepted. An empty variable counts as unset everywhere here
// (env_value aside), since `VAR= prog` is how a person clears a setting.
#pragma once

#include "common/number_text.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace hashi {

// The variable's value as set, empty included; nullopt when unset. Its
// type fits the `env` lookups that option parsers take, so tests can hand
// them a map instead.
std::optional<std::string> env_value(const std::string& name);

// The variable's value when it is set and not empty.
std::optional<std::string> env_text(const char* name);

// The variable as a whole number within `range`, `fallback` when unset or
// empty. nullopt and `error` ("NAME='x' is not a whole number from 1 to
// 600 seconds") when it is malformed or out of range.
std::optional<std::uint64_t> env_whole(
    const char* name, std::uint64_t fallback, const WholeRange& range, std::string& error);

// The variable as on/off (parse_switch's forms), `fallback` when unset or
// empty.
std::optional<bool> env_switch(const char* name, bool fallback, std::string& error);

} // namespace hashi
