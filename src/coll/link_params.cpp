// SPDX-License-Identifier: BSD-3-Clause
#include "link_params.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace hashi::coll {

namespace {
LinkParams current;

struct Key {
    const char* name;
    double LinkParams::*field;
    double scale; // file unit -> SI
};
constexpr Key keys[] = {
    {"local_latency_us", &LinkParams::local_latency, 1e-6},
    {"node_rate_mbit", &LinkParams::node_rate, 1e6 / 8},
    {"node_exchange_rate_mbit", &LinkParams::node_exchange_rate, 1e6 / 8},
    {"wan_latency_ms", &LinkParams::wan_latency, 1e-3},
    {"wan_flow_rate_mbit", &LinkParams::wan_flow_rate, 1e6 / 8},
    {"wan_rate_mbit", &LinkParams::wan_rate, 1e6 / 8},
    {"reduce_rate_mbyte", &LinkParams::reduce_rate, 1e6},
    {"wan_burst_loss_percent", &LinkParams::wan_burst_loss, 1e-2},
};

std::string trim(const std::string& s)
{
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos)
        return {};
    return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}
} // namespace

int LinkParams::wan_senders() const
{
    // Rounded, not floored: a measured 1.9 flows' worth means two senders
    // fit (measurements run a little under the line rate).
    const double k = std::round(wan_rate / std::max(wan_flow_rate, 1.0));
    return static_cast<int>(std::clamp(k, 1.0, 1e6));
}

double LinkParams::wan_rate_of(int k, bool paced) const
{
    if (k <= wan_senders())
        return std::min(k * wan_flow_rate, wan_rate);
    return paced ? wan_rate : 0.5 * wan_rate;
}

double LinkParams::exchange_rate() const
{
    // Never above the one-way rate: a probe on a busy machine can see more.
    return node_exchange_rate > 0 ? std::min(node_exchange_rate, node_rate) : node_rate;
}

bool LinkParams::wan_drops() const
{
    return wan_burst_loss >= kWanDropShare;
}

const LinkParams& link_params()
{
    return current;
}
void set_link_params(const LinkParams& p)
{
    current = p;
}

LinkParams read_link_params(const std::string& path, LinkParams p)
{
    std::ifstream in(path);
    if (!in)
        throw std::runtime_error("HASHI_COLL_PARAMS: cannot read '" + path + "'");
    std::string line;
    for (int lineno = 1; std::getline(in, line); ++lineno) {
        const auto hash = line.find('#');
        if (hash != std::string::npos)
            line.resize(hash);
        line = trim(line);
        if (line.empty())
            continue;
        const auto where = path + ":" + std::to_string(lineno) + ": ";
        const auto eq = line.find('=');
        if (eq == std::string::npos)
            throw std::runtime_error(where + "expected KEY=VALUE, got '" + line + "'");
        const std::string key = trim(line.substr(0, eq)), value = trim(line.substr(eq + 1));
        const Key* k = std::find_if(std::begin(keys), std::end(keys), [&](const Key& x) { return key == x.name; });
        if (k == std::end(keys)) {
            std::string known;
            for (const Key& x : keys)
                known += std::string(known.empty() ? "" : ", ") + x.name;
            throw std::runtime_error(where + "unknown key '" + key + "' (known: " + known + ")");
        }
        char* end = nullptr;
        const double v = std::strtod(value.c_str(), &end);
        if (value.empty() || *end != '\0' || !std::isfinite(v) || v <= 0)
            throw std::runtime_error(where + key + " must be a positive number, got '" + value + "'");
        p.*(k->field) = v * k->scale;
    }
    p.source = "file " + path;
    return p;
}

void write_link_params(const std::string& path, const LinkParams& p)
{
    std::ofstream out(path);
    out << "# Hashi collectives: link parameters (" << p.source << ")\n";
    for (const Key& k : keys)
        if (p.*(k.field) > 0) // node_exchange_rate 0: not known, as node_rate; no loss seen
            out << k.name << " = " << p.*(k.field) / k.scale << "\n";
    if (!out)
        throw std::runtime_error("HASHI_COLL_PARAMS_SAVE: cannot write '" + path + "'");
}

} // namespace hashi::coll
