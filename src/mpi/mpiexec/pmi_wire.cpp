// SPDX-License-Identifier: BSD-3-Clause
#include "pmi_wire.hpp"

namespace hashi::mpiexec::pmi {

std::optional<std::string> Message::get(std::string_view key) const
{
    for (const auto& [k, v] : fields) {
        if (k == key) {
            return v;
        }
    }
    return std::nullopt;
}

std::optional<Message> parse(std::string_view line, std::string& error)
{
    if (!line.empty() && line.back() == '\n') {
        line.remove_suffix(1);
    }
    if (line.size() >= max_line) {
        error = "line longer than " + std::to_string(max_line) + " bytes";
        return std::nullopt;
    }
    Message msg;
    bool first = true;
    size_t pos = 0;
    while (pos < line.size()) {
        while (pos < line.size() && line[pos] == ' ') {
            ++pos;
        }
        if (pos >= line.size()) {
            break;
        }
        auto end = line.find(' ', pos);
        auto token = line.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
        pos = end == std::string_view::npos ? line.size() : end;
        auto eq = token.find('=');
        if (eq == std::string_view::npos || eq == 0) {
            error = "token '" + std::string(token) + "' is not key=value";
            return std::nullopt;
        }
        for (char c : token) {
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
                error = "control character in token";
                return std::nullopt;
            }
        }
        std::string key(token.substr(0, eq));
        std::string value(token.substr(eq + 1));
        if (first) {
            if (key != "cmd" && key != "mcmd") {
                error = "message does not start with cmd=";
                return std::nullopt;
            }
            msg.cmd = std::move(value);
            first = false;
        } else {
            msg.fields.emplace_back(std::move(key), std::move(value));
        }
    }
    if (first || msg.cmd.empty()) {
        error = "empty message";
        return std::nullopt;
    }
    return msg;
}

std::string format(std::string_view cmd, const std::vector<std::pair<std::string, std::string>>& fields)
{
    std::string line = "cmd=";
    line += cmd;
    for (const auto& [k, v] : fields) {
        line += ' ';
        line += k;
        line += '=';
        line += v;
    }
    line += '\n';
    return line;
}

} // namespace hashi::mpiexec::pmi
