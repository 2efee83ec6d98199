// SPDX-License-Identifier: BSD-3-Clause
// Numbers and switches read from text a person typed: a flag's value, an
// environment variable (environment.hpp), a host list entry. One family,
// so that every program accepts the same forms and, when it refuses one,
// says the same thing: what was read, the bad text, and what is accepted.
//
// Nothing throws and nothing prints: the provider cannot let an exception
// cross libfabric, and each caller has its own way to report (a usage
// error, an exception, a warning and a fallback). A failure returns
// nullopt and sets `error` to a whole sentence fragment such as
//   option -n 'many' is not a whole number from 1 to 1048576
//   HASHI_COLL_SEGMENT='9Q' is not a whole number from 0 to 1073741824 (a K, M or G suffix is allowed)
// `label` says where the text came from. A label ending in '=' names a
// variable and is written NAME='text'; any other is written label 'text'.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace hashi {

// What a whole number may be.
struct WholeRange {
    std::uint64_t lo = 0;
    std::uint64_t hi = std::numeric_limits<std::uint64_t>::max();
    int base = 10; // 10, or 16 (hexadecimal digits, an optional 0x in front)
    bool size_suffix = false; // a K, M or G after the digits multiplies by 1024, 1024^2, 1024^3
    std::string_view unit {}; // what it counts ("seconds", "MiB"): said after the range
};

// The whole of `text` as a number within `range`. No sign, no spaces.
std::optional<std::uint64_t> parse_whole(
    std::string_view label, std::string_view text, const WholeRange& range, std::string& error);

// What a number with a fraction may be.
struct DecimalRange {
    double lo = 0;
    double hi = 0;
    std::string_view unit {};
    std::string_view note {}; // said after the range in parentheses, e.g. "fractions allowed, e.g. 2.5"
};

// The whole of `text` as a finite decimal number within `range` ("2.5",
// "10"; no spaces).
std::optional<double> parse_decimal(
    std::string_view label, std::string_view text, const DecimalRange& range, std::string& error);

// on/off, yes/no, true/false, 1/0, in any case.
std::optional<bool> parse_switch(std::string_view label, std::string_view text, std::string& error);

// How a message names the text that `label` read: NAME='text' or label 'text'.
std::string quoted_subject(std::string_view label, std::string_view text);

} // namespace hashi
