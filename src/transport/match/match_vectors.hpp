// SPDX-License-Identifier: BSD-3-Clause
// Test vectors for a match_backend: the text format of
// tests/unit/data/match-vectors.txt (described at the top of that file),
// read into scenarios, written back, and played against any backend.
//
// The format is line-based with `key=value` fields so that a C program (the
// o2g kernel module's user-space checker) can read it with strtok and
// strtoull. Test tooling: errors come back as values, nothing throws but
// std::bad_alloc.
#pragma once

#include "transport/match/match_backend.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hashi::match::vectors {

enum class op { post, arrive, peek, claim, cancel, remove, fail, renumber, depth };

// What the `expect` line after an operation says about its result.
struct expectation {
    enum class kind {
        none, // depth carries its own numbers
        queued, // post/arrive: nullopt
        match, // post/arrive: a match_result
        message, // peek/claim: a message
        no_message, // peek/claim: nullopt
        boolean, // cancel/remove
        failed, // fail: the receives returned, in posting order
    };
    kind what = kind::none;
    int line = 0;
    std::uint64_t recv = 0; // match: the receive's cookie
    std::uint64_t msg = 0; // match, message: the message's cookie
    bool truncated = false; // match
    bool value = false; // boolean
    std::vector<std::uint64_t> failed; // failed
    // Optional checks of the message's fields (match, message).
    std::optional<source_t> source;
    std::optional<std::uint64_t> tag;
    std::optional<std::uint64_t> length;
    std::optional<std::uint64_t> data;

    bool operator==(const expectation&) const = default;
};

struct step {
    op what = op::depth;
    int line = 0;
    posted_recv recv; // post
    arrived_msg msg; // arrive
    // peek: source, tag, ignore, claim_cookie; fail, renumber: source
    source_t source = any_source;
    std::uint64_t tag = 0;
    std::uint64_t ignore = 0;
    std::optional<std::uint64_t> claim_cookie;
    std::uint64_t cookie = 0; // claim, cancel, remove
    std::vector<std::uint64_t> cookies; // renumber
    std::size_t posted = 0; // depth
    std::size_t unexpected = 0; // depth
    expectation expect;

    bool operator==(const step& other) const;
};

struct scenario {
    std::string name;
    int line = 0;
    std::vector<step> steps;
};

struct parse_result {
    std::vector<scenario> scenarios;
    std::string error; // "file:line: what is wrong"; empty when all is well
    [[nodiscard]] bool ok() const noexcept { return error.empty(); }
};

// Reads vector text; `file` only names the source in error messages.
parse_result parse(std::string_view text, std::string_view file);
parse_result load(const std::string& path);

// The text of one block, in the format parse() reads; the steps come back
// equal (line numbers aside).
std::string format(const scenario& s);

// Plays a scenario against a backend that starts empty. Returns the first
// mismatch as "file:line: scenario NAME: expected ..., got ...", or nullopt.
std::optional<std::string> run(match_backend& backend, const scenario& s, std::string_view file);

} // namespace hashi::match::vectors
