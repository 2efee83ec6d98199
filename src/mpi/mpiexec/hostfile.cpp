// SPDX-License-Identifier: BSD-3-Clause
#include "hostfile.hpp"

#include "common/number_text.hpp"

#include <cctype>
#include <fstream>
#include <sstream>

namespace hashi::mpiexec {
namespace {

// Longest slot count we accept; anything larger is a typo, not a node.
constexpr int max_slots = 1 << 20;

std::string_view trim(std::string_view s)
{
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) {
        s.remove_prefix(1);
    }
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) {
        s.remove_suffix(1);
    }
    return s;
}

// Host names as DNS and our testbed use them: letters, digits, '-', '.', '_'
// (and ':' is the slot separator, so never part of a name).
bool valid_host_name(std::string_view name)
{
    if (name.empty() || name.size() > 253) {
        return false;
    }
    for (char c : name) {
        if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '-' && c != '.' && c != '_') {
            return false;
        }
    }
    return true;
}

// Returns an empty string on success, else what was wrong.
std::string parse_slots(std::string_view text, int& slots)
{
    if (text.empty()) {
        return "slot count is empty";
    }
    std::string error;
    const auto value = parse_whole("slot count", text, {.lo = 1, .hi = max_slots}, error);
    if (!value) {
        return error;
    }
    slots = static_cast<int>(*value);
    return {};
}

// Parses one `host`, `host:N` entry. Returns the error text, empty if fine.
std::string parse_entry(std::string_view entry, HostSlots& out)
{
    auto colon = entry.find(':');
    std::string_view name = entry.substr(0, colon);
    if (!valid_host_name(name)) {
        return "'" + std::string(name) + "' is not a valid host name";
    }
    out.name = std::string(name);
    out.slots = 1;
    if (colon != std::string_view::npos) {
        return parse_slots(entry.substr(colon + 1), out.slots);
    }
    return {};
}

} // namespace

std::vector<HostSlots> parse_host_list(std::string_view list)
{
    std::vector<HostSlots> hosts;
    if (trim(list).empty()) {
        throw HostListError("host list is empty");
    }
    size_t pos = 0;
    while (pos <= list.size()) {
        auto comma = list.find(',', pos);
        auto entry = trim(list.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
        HostSlots h;
        if (auto err = parse_entry(entry, h); !err.empty()) {
            throw HostListError("host list entry '" + std::string(entry) + "': " + err);
        }
        hosts.push_back(std::move(h));
        if (comma == std::string_view::npos) {
            break;
        }
        pos = comma + 1;
    }
    return hosts;
}

std::vector<HostSlots> parse_hostfile(std::string_view text, std::string_view origin)
{
    std::vector<HostSlots> hosts;
    int lineno = 0;
    size_t pos = 0;
    while (pos < text.size()) {
        auto nl = text.find('\n', pos);
        auto raw = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
        pos = nl == std::string_view::npos ? text.size() : nl + 1;
        ++lineno;
        auto where = std::string(origin) + ":" + std::to_string(lineno) + ": ";
        auto line = raw.substr(0, raw.find('#'));
        line = trim(line);
        if (line.empty()) {
            continue;
        }
        // Split into whitespace-separated words: host[:N] [slots=N]
        std::vector<std::string_view> words;
        size_t i = 0;
        while (i < line.size()) {
            while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i])) != 0) {
                ++i;
            }
            size_t start = i;
            while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i])) == 0) {
                ++i;
            }
            if (i > start) {
                words.push_back(line.substr(start, i - start));
            }
        }
        HostSlots h;
        if (auto err = parse_entry(words[0], h); !err.empty()) {
            throw HostListError(where + err);
        }
        for (size_t w = 1; w < words.size(); ++w) {
            auto word = words[w];
            if (word.starts_with("slots=")) {
                if (words[0].find(':') != std::string_view::npos) {
                    throw HostListError(where + "slots given twice (host:N and slots=N)");
                }
                if (auto err = parse_slots(word.substr(6), h.slots); !err.empty()) {
                    throw HostListError(where + err);
                }
            } else {
                throw HostListError(
                    where + "unexpected '" + std::string(word) + "' (expected 'host', 'host:N' or 'host slots=N')");
            }
        }
        hosts.push_back(std::move(h));
    }
    if (hosts.empty()) {
        throw HostListError(std::string(origin) + ": no hosts listed");
    }
    return hosts;
}

std::vector<HostSlots> read_hostfile(const std::string& path)
{
    std::ifstream in(path);
    if (!in) {
        throw HostListError("cannot read hostfile '" + path + "'");
    }
    std::ostringstream text;
    text << in.rdbuf();
    return parse_hostfile(text.str(), path);
}

} // namespace hashi::mpiexec
