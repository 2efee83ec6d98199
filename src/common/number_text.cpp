// SPDX-License-Identifier: BSD-3-Clause
#include "common/number_text.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace hashi {
namespace {

std::string hex(std::uint64_t v)
{
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

// Doubles as typed: 2.5, not 2.500000.
std::string decimal(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

std::string with_unit(std::string text, std::string_view unit)
{
    if (!unit.empty())
        text += " " + std::string(unit);
    return text;
}

std::uint64_t suffix_scale(char c)
{
    switch (c) {
    case 'k':
    case 'K':
        return 1ULL << 10;
    case 'm':
    case 'M':
        return 1ULL << 20;
    case 'g':
    case 'G':
        return 1ULL << 30;
    default:
        return 0;
    }
}

} // namespace

std::string quoted_subject(std::string_view label, std::string_view text)
{
    if (label.ends_with('='))
        return std::string(label) + "'" + std::string(text) + "'";
    return std::string(label) + " '" + std::string(text) + "'";
}

std::optional<std::uint64_t> parse_whole(
    std::string_view label, std::string_view text, const WholeRange& range, std::string& error)
{
    std::string_view digits = text;
    if (range.base == 16 && (digits.starts_with("0x") || digits.starts_with("0X")))
        digits.remove_prefix(2);
    std::uint64_t v = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, range.base);
    bool ok = !digits.empty() && ec == std::errc() && end != digits.data();
    if (ok && end != digits.data() + digits.size()) {
        // Only a size suffix may follow, and only as the last character.
        const std::uint64_t scale = range.size_suffix ? suffix_scale(*end) : 0;
        ok = scale != 0 && end + 1 == digits.data() + digits.size() && v <= range.hi / scale;
        v *= scale;
    }
    if (ok && v >= range.lo && v <= range.hi)
        return v;
    const bool in_hex = range.base == 16;
    error = quoted_subject(label, text) + " is not " + (in_hex ? "a hexadecimal" : "a whole") + " number from " +
        with_unit((in_hex ? hex(range.lo) : std::to_string(range.lo)) + " to " +
                (in_hex ? hex(range.hi) : std::to_string(range.hi)),
            range.unit);
    if (range.size_suffix)
        error += " (a K, M or G suffix is allowed)";
    return std::nullopt;
}

std::optional<double> parse_decimal(
    std::string_view label, std::string_view text, const DecimalRange& range, std::string& error)
{
    double v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (!text.empty() && ec == std::errc() && end == text.data() + text.size() && std::isfinite(v) && v >= range.lo &&
        v <= range.hi)
        return v;
    error = quoted_subject(label, text) + " is not a number from " +
        with_unit(decimal(range.lo) + " to " + decimal(range.hi), range.unit);
    if (!range.note.empty())
        error += " (" + std::string(range.note) + ")";
    return std::nullopt;
}

std::optional<bool> parse_switch(std::string_view label, std::string_view text, std::string& error)
{
    std::string t(text);
    for (char& c : t)
        c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (t == "on" || t == "yes" || t == "true" || t == "1")
        return true;
    if (t == "off" || t == "no" || t == "false" || t == "0")
        return false;
    error = quoted_subject(label, text) + " is not on or off (or yes/no, true/false, 1/0)";
    return std::nullopt;
}

} // namespace hashi
