// SPDX-License-Identifier: BSD-3-Clause
// How a connection to mpiexec's TCP PMI port (ssh launcher) proves which
// rank it belongs to. Anyone who can reach the port can connect, so the
// first line must prove knowledge of that rank's token, which mpiexec sent
// to the rank's ssh shim over ssh's stdin (never on a command line):
//
//   shim:    cmd=hashi_auth v=1 pmiid=N channel=lifeline|pmi nonce=<64 hex> proof=<64 hex>
//   mpiexec: cmd=hashi_auth_ok proof=<64 hex>
//
// The client proof is HMAC-SHA256(token, "hashi pmi auth v1 client" ...
// channel, pmiid, nonce), the answer the same with "server", so the token
// never crosses the wire and the shim knows it reached the real mpiexec.
// The client speaks first and a refusal is a silent close: a stranger
// learns nothing, not even that this is mpiexec. Each (rank, channel) is
// accepted once, so a recorded line cannot be replayed later.
#pragma once

#include "secrets.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace hashi::mpiexec::pmi_auth {

enum class Channel { lifeline, pmi };

struct Claim {
    int pmiid = -1;
    Channel channel = Channel::pmi;
    Secret nonce {};
    Secret proof {};
};

// The shim's first line.
std::string client_hello(const Secret& token, int pmiid, Channel channel, const Secret& nonce);

// Parses a first line into what it claims; nullopt with `why` set when it
// is not a well-formed hello (which says nothing about the proof).
std::optional<Claim> parse_hello(std::string_view line, std::string& why);

// True when the claim's proof was made with `token` (constant time).
bool proves(const Claim& claim, const Secret& token);

// mpiexec's answer to an accepted claim.
std::string server_reply(const Secret& token, const Claim& claim);

// The shim's check of that answer.
bool server_reply_ok(std::string_view line, const Secret& token, const Claim& claim);

} // namespace hashi::mpiexec::pmi_auth
