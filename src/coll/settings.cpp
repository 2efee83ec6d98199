// SPDX-License-Identifier: BSD-3-Clause
#include "settings.hpp"

#include "common/environment.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>

namespace hashi::coll {

namespace {

Settings current;

// A whole number up to `max` with an optional K/M/G suffix (powers of
// 1024); nullopt when the variable is unset or empty.
std::optional<unsigned long long> env_size(const char* name, unsigned long long max)
{
    const auto text = env_text(name);
    if (!text)
        return std::nullopt;
    std::string error;
    const auto v = parse_whole(std::string(name) + "=", *text, {.hi = max, .size_suffix = true}, error);
    if (!v)
        throw std::runtime_error(error);
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
    if (auto v = env_text("HASHI_COLL")) {
        std::string error;
        const auto on = parse_switch("HASHI_COLL=", *v, error);
        if (!on)
            throw std::runtime_error(error);
        s.enabled = *on;
    }
    if (auto v = env_size("HASHI_COLL_VERBOSE", 2))
        s.verbose = static_cast<int>(*v);
    for (std::size_t i = 0; i < kCollectives; ++i) {
        const auto c = static_cast<Collective>(i);
        const std::string name = "HASHI_COLL_" + std::string(env_suffix_of(c));
        const auto v = env_text(name.c_str());
        if (!v)
            continue;
        const std::string& t = *v;
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
    if (auto v = env_size("HASHI_COLL_WAN_SENDERS", 1 << 20)) {
        s.wan_senders = static_cast<int>(*v);
        if (s.wan_senders == 0)
            throw std::runtime_error("HASHI_COLL_WAN_SENDERS=0: at least one process must be allowed to send "
                                     "over the WAN (unset it to take the cap from the link parameters)");
    }
    if (auto v = env_size("HASHI_COLL_SEGMENT", 1ULL << 30)) {
        s.segment_bytes = *v;
        if (s.segment_bytes != 0 && s.segment_bytes < 64)
            throw std::runtime_error("HASHI_COLL_SEGMENT=" + *env_text("HASHI_COLL_SEGMENT") +
                " is too small: segments of at least 64 bytes (0 = chosen by the cost model)");
    }
    if (auto v = env_text("HASHI_COLL_PARAMS"))
        s.params_file = *v;
    if (auto v = env_text("HASHI_COLL_PROBE")) {
        s.probe = *v;
        if (s.probe != "auto" && s.probe != "off")
            throw std::runtime_error("HASHI_COLL_PROBE='" + s.probe + "' must be auto or off");
    }
    if (auto v = env_text("HASHI_COLL_PARAMS_SAVE"))
        s.params_save = *v;
    try {
        if (auto v = env_size("HASHI_WAN_RATE", 10'000'000))
            s.wan_rate_mbit = *v;
    } catch (const std::runtime_error& e) {
        throw std::runtime_error(std::string(e.what()) + "; HASHI_WAN_RATE is the job's WAN budget in Mbit/s");
    }
    if (auto v = env_size("HASHI_WAN_SENDERS", 1 << 20)) {
        s.job_wan_senders = static_cast<int>(*v);
        if (s.job_wan_senders == 0)
            throw std::runtime_error("HASHI_WAN_SENDERS=0: the WAN budget is shared by at least one sender "
                                     "(unset, a process may have the whole budget outside collectives)");
    }
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
