// SPDX-License-Identifier: BSD-3-Clause
#include "shim_handoff.hpp"

#include <unistd.h>

#include <cerrno>
#include <charconv>

namespace hashi::mpiexec {
namespace {

constexpr std::string_view magic = "hashi-shim v1";
constexpr std::size_t max_header_line = 128;

// One '\n'-terminated header line, without the '\n'.
std::optional<std::string> read_line(const ReadExact& read)
{
    std::string line;
    char c = 0;
    while (read(&c, 1)) {
        if (c == '\n') {
            return line;
        }
        if (line.size() >= max_header_line) {
            return std::nullopt;
        }
        line += c;
    }
    return std::nullopt;
}

} // namespace

std::string encode_handoff(const ShimHandoff& h)
{
    std::string out(magic);
    out += "\ntoken " + to_hex(h.token) + "\n";
    for (const auto& [k, v] : h.env) {
        std::string entry = k + "=" + v;
        out += "env " + std::to_string(entry.size()) + "\n" + entry + "\n";
    }
    out += "end\n";
    return out;
}

std::optional<ShimHandoff> decode_handoff(const ReadExact& read, std::string& why)
{
    auto first = read_line(read);
    if (!first || *first != magic) {
        why = "input does not start with '" + std::string(magic) + "'";
        return std::nullopt;
    }
    ShimHandoff h;
    bool have_token = false;
    std::size_t total = 0;
    for (;;) {
        auto line = read_line(read);
        if (!line) {
            why = "input ended or a header line is too long before 'end'";
            return std::nullopt;
        }
        if (*line == "end") {
            break;
        }
        if (line->starts_with("token ")) {
            auto t = secret_from_hex(std::string_view(*line).substr(6));
            if (!t) {
                why = "malformed token";
                return std::nullopt;
            }
            h.token = *t;
            have_token = true;
            continue;
        }
        if (!line->starts_with("env ")) {
            why = "unknown header line";
            return std::nullopt;
        }
        std::size_t len = 0;
        const char* b = line->data() + 4;
        const char* e = line->data() + line->size();
        auto [end, ec] = std::from_chars(b, e, len);
        if (ec != std::errc() || end != e || len > handoff_max_entry || total + len > handoff_max_total) {
            why = "bad or too large environment entry length";
            return std::nullopt;
        }
        total += len;
        std::string entry(len + 1, '\0');
        if (!read(entry.data(), entry.size()) || entry.back() != '\n') {
            why = "environment entry cut short";
            return std::nullopt;
        }
        entry.pop_back();
        auto eq = entry.find('=');
        if (eq == 0 || eq == std::string::npos || entry.find('\0') != std::string::npos) {
            why = "environment entry is not NAME=value";
            return std::nullopt;
        }
        h.env.emplace_back(entry.substr(0, eq), entry.substr(eq + 1));
    }
    if (!have_token) {
        why = "no token";
        return std::nullopt;
    }
    return h;
}

ReadExact fd_reader(int fd)
{
    return [fd](char* buf, std::size_t n) {
        while (n > 0) {
            ssize_t r = ::read(fd, buf, n);
            if (r < 0 && errno == EINTR) {
                continue;
            }
            if (r <= 0) {
                return false;
            }
            buf += r;
            n -= static_cast<std::size_t>(r);
        }
        return true;
    };
}

} // namespace hashi::mpiexec
