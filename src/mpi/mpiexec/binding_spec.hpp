// SPDX-License-Identifier: BSD-3-Clause
// What -bind-to and -map-by ask for, spelled as MPICH's Hydra spells them
// (`mpiexec.hydra -bind-to -help`), parsed with no knowledge of any
// machine: the binding itself is computed where each rank runs, from that
// node's hwloc topology (binding_plan.hpp). The text survives the trip to
// a remote node as it was typed, and is parsed again there.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace hashi::mpiexec {

// The hardware objects a rank can be bound to or mapped by.
enum class TopoLevel {
    machine,
    numa,
    package,
    l5cache,
    l4cache,
    l3cache,
    l2cache,
    l1cache,
    l3icache,
    l2icache,
    l1icache,
    core,
    hwthread
};

// `count` consecutive objects of one level: core:2 is two cores.
struct ObjectSpan {
    TopoLevel level = TopoLevel::core;
    int count = 1;
};

enum class BindKind {
    none, // no binding: ranks keep the CPUs mpiexec (or the remote shell) has
    object, // core, socket:2, l3cache, ... (with -map-by)
    round_robin, // rr: one hardware thread each, in OS numbering
    user, // user:0+2,1+4,3: the CPUs of each local rank listed
};

struct BindingSpec {
    BindKind kind = BindKind::none;
    ObjectSpan bind; // kind == object
    ObjectSpan map; // kind == object: -map-by, or the same as bind
    std::vector<std::vector<unsigned>> user_cpus; // kind == user: OS CPU numbers per local rank
    std::string bind_text; // as given: "core:2"
    std::string map_text; // as given, empty when -map-by was not

    [[nodiscard]] bool binds() const { return kind != BindKind::none; }
};

class BindingError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Parses -bind-to's and -map-by's values (map_by empty: not given). Throws
// BindingError naming the flag, the text and what is accepted.
BindingSpec parse_binding(std::string_view bind_to, std::string_view map_by);

// The name Hydra uses for a level ("socket", "numa", "l3cache", ...), and
// its plural for reports.
std::string_view level_name(TopoLevel level);
std::string level_plural(TopoLevel level);

} // namespace hashi::mpiexec
