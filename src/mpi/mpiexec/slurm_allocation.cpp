// SPDX-License-Identifier: BSD-3-Clause
#include "slurm_allocation.hpp"

#include "common/number_text.hpp"

#include <cctype>
#include <cstdint>

namespace hashi::mpiexec {
namespace {

// More hosts than any allocation has; a typo such as "n[1-99999999]" is
// refused instead of filling memory.
constexpr std::uint64_t max_hosts = 1U << 20;
constexpr std::uint64_t max_tasks = 1U << 20;

bool host_char(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.';
}

bool all_digits(std::string_view s)
{
    return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

// Splits at commas outside brackets; `what` names the list in errors.
std::vector<std::string_view> split_top_level(std::string_view text, std::string_view what)
{
    std::vector<std::string_view> parts;
    int depth = 0;
    size_t start = 0;
    for (size_t i = 0; i <= text.size(); ++i) {
        char c = i < text.size() ? text[i] : ',';
        if (c == '[') {
            if (++depth > 1) {
                throw SlurmAllocationError(std::string(what) + " '" + std::string(text) + "' has a '[' inside brackets");
            }
        } else if (c == ']') {
            if (--depth < 0) {
                throw SlurmAllocationError(std::string(what) + " '" + std::string(text) + "' has a ']' without '['");
            }
        } else if (c == ',' && depth == 0) {
            if (i == start) {
                throw SlurmAllocationError(std::string(what) + " '" + std::string(text) + "' has an empty entry");
            }
            parts.push_back(text.substr(start, i - start));
            start = i + 1;
        }
    }
    if (depth != 0) {
        throw SlurmAllocationError(std::string(what) + " '" + std::string(text) + "' has a '[' without ']'");
    }
    return parts;
}

// The numbers of one bracket ("01-04,07"), formatted as Slurm writes them.
std::vector<std::string> expand_bracket(std::string_view inside, std::string_view entry)
{
    auto bad = [&](const std::string& why) {
        return SlurmAllocationError("host list entry '" + std::string(entry) + "': " + why);
    };
    if (inside.empty()) {
        throw bad("empty brackets");
    }
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= inside.size()) {
        size_t comma = inside.find(',', start);
        std::string_view item = inside.substr(start, comma == std::string_view::npos ? inside.npos : comma - start);
        size_t dash = item.find('-');
        std::string_view lo_text = item.substr(0, dash);
        std::string_view hi_text = dash == std::string_view::npos ? lo_text : item.substr(dash + 1);
        if (!all_digits(lo_text) || !all_digits(hi_text) || lo_text.size() > 18 || hi_text.size() > 18) {
            throw bad("'" + std::string(item) + "' is not a number or a range such as 01-04");
        }
        std::uint64_t lo = std::stoull(std::string(lo_text));
        std::uint64_t hi = std::stoull(std::string(hi_text));
        if (hi < lo) {
            throw bad("the range '" + std::string(item) + "' runs backwards");
        }
        if (hi - lo >= max_hosts || out.size() + (hi - lo + 1) > max_hosts) {
            throw bad("more than " + std::to_string(max_hosts) + " hosts");
        }
        for (std::uint64_t n = lo; n <= hi; ++n) {
            std::string digits = std::to_string(n);
            if (digits.size() < lo_text.size()) {
                digits.insert(0, lo_text.size() - digits.size(), '0');
            }
            out.push_back(std::move(digits));
        }
        if (comma == std::string_view::npos) {
            break;
        }
        start = comma + 1;
    }
    return out;
}

// One entry such as "rack[1-2]-n[01-03]": every combination, left bracket slowest.
void expand_entry(std::string_view entry, std::vector<std::string>& hosts)
{
    std::vector<std::string> names {""};
    size_t i = 0;
    while (i < entry.size()) {
        if (entry[i] == '[') {
            size_t close = entry.find(']', i);
            auto numbers = expand_bracket(entry.substr(i + 1, close - i - 1), entry);
            if (names.size() * numbers.size() > max_hosts) {
                throw SlurmAllocationError(
                    "host list entry '" + std::string(entry) + "': more than " + std::to_string(max_hosts) + " hosts");
            }
            std::vector<std::string> next;
            next.reserve(names.size() * numbers.size());
            for (const auto& n : names) {
                for (const auto& d : numbers) {
                    next.push_back(n + d);
                }
            }
            names = std::move(next);
            i = close + 1;
        } else if (host_char(entry[i])) {
            for (auto& n : names) {
                n += entry[i];
            }
            ++i;
        } else {
            throw SlurmAllocationError("host list entry '" + std::string(entry) + "' has '" + std::string(1, entry[i]) +
                "', which is not part of a host name");
        }
    }
    if (hosts.size() + names.size() > max_hosts) {
        throw SlurmAllocationError("the host list names more than " + std::to_string(max_hosts) + " hosts");
    }
    for (auto& n : names) {
        hosts.push_back(std::move(n));
    }
}

std::uint64_t whole(std::string_view text, std::string_view context, std::uint64_t hi)
{
    std::string error;
    auto v = parse_whole(context, text, {.lo = 1, .hi = hi}, error);
    if (!v) {
        throw SlurmAllocationError(error);
    }
    return *v;
}

} // namespace

std::vector<std::string> expand_slurm_nodelist(std::string_view nodelist)
{
    if (nodelist.empty()) {
        throw SlurmAllocationError("the host list is empty");
    }
    std::vector<std::string> hosts;
    for (auto entry : split_top_level(nodelist, "host list")) {
        expand_entry(entry, hosts);
    }
    return hosts;
}

std::vector<int> expand_slurm_tasks_per_node(std::string_view tasks_per_node)
{
    if (tasks_per_node.empty()) {
        throw SlurmAllocationError("the tasks per node are empty");
    }
    std::vector<int> counts;
    size_t start = 0;
    while (start <= tasks_per_node.size()) {
        size_t comma = tasks_per_node.find(',', start);
        std::string_view item = tasks_per_node.substr(start, comma == std::string_view::npos ? tasks_per_node.npos : comma - start);
        std::string_view tasks = item;
        std::uint64_t repeat = 1;
        if (auto paren = item.find('('); paren != std::string_view::npos) {
            if (!item.ends_with(')') || item.substr(paren).size() < 4 || item[paren + 1] != 'x') {
                throw SlurmAllocationError("tasks per node entry '" + std::string(item) + "' is not N or N(xM)");
            }
            tasks = item.substr(0, paren);
            repeat = whole(item.substr(paren + 2, item.size() - paren - 3),
                "tasks per node repeat count", max_hosts);
        }
        auto n = whole(tasks, "tasks per node count", max_tasks);
        if (counts.size() + repeat > max_hosts) {
            throw SlurmAllocationError("the tasks per node describe more than " + std::to_string(max_hosts) + " nodes");
        }
        counts.insert(counts.end(), repeat, static_cast<int>(n));
        if (comma == std::string_view::npos) {
            break;
        }
        start = comma + 1;
    }
    return counts;
}

std::vector<HostSlots> slurm_hosts(std::string_view nodelist, std::string_view tasks_per_node)
{
    auto names = expand_slurm_nodelist(nodelist);
    auto counts = expand_slurm_tasks_per_node(tasks_per_node);
    if (names.size() != counts.size()) {
        throw SlurmAllocationError("the node list '" + std::string(nodelist) + "' names " + std::to_string(names.size()) +
            " nodes but the tasks per node '" + std::string(tasks_per_node) + "' describe " +
            std::to_string(counts.size()));
    }
    std::vector<HostSlots> hosts;
    hosts.reserve(names.size());
    for (size_t i = 0; i < names.size(); ++i) {
        hosts.push_back({names[i], counts[i]});
    }
    return hosts;
}

} // namespace hashi::mpiexec
