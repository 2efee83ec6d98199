// SPDX-License-Identifier: BSD-3-Clause
#include "binding_spec.hpp"

#include "common/number_text.hpp"

#include <array>
#include <utility>

namespace hashi::mpiexec {
namespace {

// Hydra's names (tools/topo/hwloc in MPICH 4.0.2). The d/u cache variants
// name the same caches as the plain ones, as in Hydra.
constexpr std::array<std::pair<std::string_view, TopoLevel>, 25> level_names {{
    {"machine", TopoLevel::machine},
    {"numa", TopoLevel::numa},
    {"numanode", TopoLevel::numa},
    {"socket", TopoLevel::package},
    {"package", TopoLevel::package},
    {"core", TopoLevel::core},
    {"hwthread", TopoLevel::hwthread},
    {"l1cache", TopoLevel::l1cache},
    {"l1dcache", TopoLevel::l1cache},
    {"l1ucache", TopoLevel::l1cache},
    {"l1icache", TopoLevel::l1icache},
    {"l2cache", TopoLevel::l2cache},
    {"l2dcache", TopoLevel::l2cache},
    {"l2ucache", TopoLevel::l2cache},
    {"l2icache", TopoLevel::l2icache},
    {"l3cache", TopoLevel::l3cache},
    {"l3dcache", TopoLevel::l3cache},
    {"l3ucache", TopoLevel::l3cache},
    {"l3icache", TopoLevel::l3icache},
    {"l4cache", TopoLevel::l4cache},
    {"l4dcache", TopoLevel::l4cache},
    {"l4ucache", TopoLevel::l4cache},
    {"l5cache", TopoLevel::l5cache},
    {"l5dcache", TopoLevel::l5cache},
    {"l5ucache", TopoLevel::l5cache},
}};

constexpr std::string_view accepted_objects =
    "core, hwthread, socket, numa, l1cache, l2cache, l3cache, machine, each with an optional :N";
constexpr int max_span = 65536;
constexpr unsigned max_cpu = 1U << 20;

[[noreturn]] void refuse(std::string_view flag, std::string_view text, std::string_view why)
{
    throw BindingError(std::string(flag) + " '" + std::string(text) + "': " + std::string(why));
}

ObjectSpan parse_span(std::string_view flag, std::string_view text)
{
    const auto colon = text.find(':');
    const auto name = text.substr(0, colon);
    for (std::string_view io : {"pci", "gpu", "ib", "hfi", "eth", "en"}) {
        if (name.starts_with(io)) {
            refuse(flag, text,
                "binding next to I/O devices (pci, gpu, ib, eth, hfi) is not supported by Hashi's mpiexec; "
                "choose one of " +
                    std::string(accepted_objects));
        }
    }
    ObjectSpan span;
    bool known = false;
    for (const auto& [n, level] : level_names) {
        if (n == name) {
            span.level = level;
            known = true;
            break;
        }
    }
    if (!known) {
        refuse(
            flag, text, "unknown object '" + std::string(name) + "'; choose one of " + std::string(accepted_objects));
    }
    if (colon != std::string_view::npos) {
        std::string error;
        auto n = parse_whole(std::string(flag) + " " + std::string(name) + ":", text.substr(colon + 1),
            {.lo = 1, .hi = max_span, .unit = "objects"}, error);
        if (!n) {
            throw BindingError(error);
        }
        span.count = static_cast<int>(*n);
    }
    return span;
}

// Hydra's user binding: entries separated by ',', one per local rank; an
// entry is CPU numbers or ranges a-b joined by '+', with an optional xN
// repeating it for N ranks: user:0+1,2-3x2 -> {0,1} {2,3} {2,3}.
std::vector<std::vector<unsigned>> parse_user_list(std::string_view text)
{
    const std::string_view flag = "-bind-to";
    std::vector<std::vector<unsigned>> sets;
    const auto list = text.substr(5);
    if (list.empty()) {
        refuse(flag, text, "no CPUs after 'user:' (e.g. user:0+1,2+3 binds local rank 0 to CPUs 0 and 1)");
    }
    size_t pos = 0;
    while (pos <= list.size()) {
        auto comma = list.find(',', pos);
        auto entry = list.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
        int repeat = 1;
        if (auto x = entry.find('x'); x != std::string_view::npos) {
            std::string error;
            auto n = parse_whole("-bind-to user: repeat x", entry.substr(x + 1), {.lo = 1, .hi = max_span}, error);
            if (!n) {
                throw BindingError(error);
            }
            repeat = static_cast<int>(*n);
            entry = entry.substr(0, x);
        }
        std::vector<unsigned> cpus;
        size_t p = 0;
        while (p <= entry.size()) {
            auto plus = entry.find('+', p);
            auto item = entry.substr(p, plus == std::string_view::npos ? std::string_view::npos : plus - p);
            auto dash = item.find('-');
            std::string error;
            auto lo = parse_whole("-bind-to user: CPU", item.substr(0, dash), {.lo = 0, .hi = max_cpu}, error);
            auto hi = dash == std::string_view::npos
                ? lo
                : parse_whole("-bind-to user: CPU", item.substr(dash + 1), {.lo = 0, .hi = max_cpu}, error);
            if (!lo || !hi) {
                throw BindingError(error + " (user: takes CPU numbers such as 0+2,1-3,4x2)");
            }
            if (*hi < *lo) {
                refuse(flag, text, "range '" + std::string(item) + "' runs backwards");
            }
            for (auto c = *lo; c <= *hi; ++c) {
                cpus.push_back(static_cast<unsigned>(c));
            }
            if (plus == std::string_view::npos) {
                break;
            }
            p = plus + 1;
        }
        for (int i = 0; i < repeat; ++i) {
            sets.push_back(cpus);
        }
        if (comma == std::string_view::npos) {
            break;
        }
        pos = comma + 1;
    }
    return sets;
}

} // namespace

BindingSpec parse_binding(std::string_view bind_to, std::string_view map_by)
{
    BindingSpec spec;
    spec.bind_text = std::string(bind_to);
    spec.map_text = std::string(map_by);
    if (bind_to.empty() || bind_to == "none") {
        if (!map_by.empty()) {
            throw BindingError("-map-by '" + std::string(map_by) +
                "' without -bind-to binds nothing (Hydra ignores it); add -bind-to, e.g. -bind-to core -map-by " +
                std::string(map_by));
        }
        spec.kind = BindKind::none;
        return spec;
    }
    if (bind_to == "rr" || bind_to.starts_with("user:")) {
        if (!map_by.empty()) {
            throw BindingError("-map-by does not apply to -bind-to " + std::string(bind_to) +
                ", which names the CPUs itself; drop -map-by");
        }
        spec.kind = bind_to == "rr" ? BindKind::round_robin : BindKind::user;
        if (spec.kind == BindKind::user) {
            spec.user_cpus = parse_user_list(bind_to);
        }
        return spec;
    }
    spec.kind = BindKind::object;
    spec.bind = parse_span("-bind-to", bind_to);
    spec.map = map_by.empty() ? spec.bind : parse_span("-map-by", map_by);
    return spec;
}

std::string_view level_name(TopoLevel level)
{
    switch (level) {
    case TopoLevel::machine:
        return "machine";
    case TopoLevel::numa:
        return "numa";
    case TopoLevel::package:
        return "socket";
    case TopoLevel::l5cache:
        return "l5cache";
    case TopoLevel::l4cache:
        return "l4cache";
    case TopoLevel::l3cache:
        return "l3cache";
    case TopoLevel::l2cache:
        return "l2cache";
    case TopoLevel::l1cache:
        return "l1cache";
    case TopoLevel::l3icache:
        return "l3icache";
    case TopoLevel::l2icache:
        return "l2icache";
    case TopoLevel::l1icache:
        return "l1icache";
    case TopoLevel::core:
        return "core";
    case TopoLevel::hwthread:
        return "hwthread";
    }
    return "object";
}

std::string level_plural(TopoLevel level)
{
    return std::string(level_name(level)) + "s";
}

} // namespace hashi::mpiexec
