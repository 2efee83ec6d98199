// SPDX-License-Identifier: BSD-3-Clause
#include "settings.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <stdexcept>

namespace hashi::coll {

namespace {

Settings current;

const char* env(const std::string& name)
{
    const char* v = std::getenv(name.c_str());
    return (v != nullptr && *v != '\0') ? v : nullptr;
}

// A non-negative integer with an optional K/M/G suffix (powers of 1024).
unsigned long long parse_size(const std::string& name, const char* text, unsigned long long max)
{
    errno = 0;
    char* end = nullptr;
    unsigned long long v = std::strtoull(text, &end, 10);
    bool ok = end != text && errno == 0 && text[0] != '-';
    if (ok && *end != '\0') {
        unsigned long long scale = 0;
        switch (*end) {
        case 'k':
        case 'K':
            scale = 1ULL << 10;
            break;
        case 'm':
        case 'M':
            scale = 1ULL << 20;
            break;
        case 'g':
        case 'G':
            scale = 1ULL << 30;
            break;
        default:
            break;
        }
        ok = scale != 0 && end[1] == '\0' && v <= max / scale;
        v *= scale;
    }
    if (!ok || v > max)
        throw std::runtime_error(name + "='" + text + "' is not a number from 0 to " + std::to_string(max) +
            " (a K, M or G suffix is allowed)");
    return v;
}

} // namespace

bool Settings::any_forced() const
{
    return std::any_of(forced.begin(), forced.end(), [](const std::string& f) { return !f.empty() && f != "auto"; });
}

Settings read_settings()
{
    Settings s;
    if (const char* v = env("HASHI_COLL")) {
        const std::string t = v;
        if (t == "on" || t == "1" || t == "yes")
            s.enabled = true;
        else if (t == "off" || t == "0" || t == "no")
            s.enabled = false;
        else
            throw std::runtime_error("HASHI_COLL='" + t + "' must be on or off");
    }
    if (const char* v = env("HASHI_COLL_VERBOSE"))
        s.verbose = static_cast<int>(parse_size("HASHI_COLL_VERBOSE", v, 2));
    for (std::size_t i = 0; i < kCollectives; ++i) {
        const auto c = static_cast<Collective>(i);
        const std::string name = "HASHI_COLL_" + std::string(env_suffix_of(c));
        const char* v = env(name);
        if (v == nullptr)
            continue;
        const std::string t = v;
        const auto algos = algorithms_of(c);
        if (t != "auto" && t != "mpich" && std::find(algos.begin(), algos.end(), t) == algos.end()) {
            std::string allowed = "auto, mpich";
            for (auto a : algos)
                allowed += ", " + std::string(a);
            throw std::runtime_error(name + "='" + t + "' is not an algorithm of " + std::string(name_of(c)) +
                "; choose one of: " + allowed);
        }
        s.forced[i] = t;
    }
    if (const char* v = env("HASHI_COLL_WAN_SENDERS")) {
        s.wan_senders = static_cast<int>(parse_size("HASHI_COLL_WAN_SENDERS", v, 1 << 20));
        if (s.wan_senders == 0)
            throw std::runtime_error("HASHI_COLL_WAN_SENDERS=0: at least one process must be allowed to send "
                                     "over the WAN (unset it to take the cap from the link parameters)");
    }
    if (const char* v = env("HASHI_COLL_SEGMENT")) {
        s.segment_bytes = parse_size("HASHI_COLL_SEGMENT", v, 1ULL << 30);
        if (s.segment_bytes != 0 && s.segment_bytes < 64)
            throw std::runtime_error("HASHI_COLL_SEGMENT=" + std::string(v) +
                " is too small: segments of at least 64 bytes (0 = chosen by the cost model)");
    }
    if (const char* v = env("HASHI_COLL_PARAMS"))
        s.params_file = v;
    if (const char* v = env("HASHI_COLL_PROBE")) {
        s.probe = v;
        if (s.probe != "auto" && s.probe != "off")
            throw std::runtime_error("HASHI_COLL_PROBE='" + s.probe + "' must be auto or off");
    }
    if (const char* v = env("HASHI_COLL_PARAMS_SAVE"))
        s.params_save = v;
    return s;
}

const Settings& settings()
{
    return current;
}
void set_settings(const Settings& s)
{
    current = s;
}

} // namespace hashi::coll
