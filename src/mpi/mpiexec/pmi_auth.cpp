// SPDX-License-Identifier: BSD-3-Clause
#include "pmi_auth.hpp"

#include "pmi_wire.hpp"

#include <charconv>

namespace hashi::mpiexec::pmi_auth {
namespace {

const char* channel_name(Channel c)
{
    return c == Channel::lifeline ? "lifeline" : "pmi";
}

// What each side's MAC covers; the role label keeps a client proof from
// being reflected back as a server answer.
Secret mac(const Secret& token, std::string_view role, const Claim& c)
{
    std::string msg = "hashi pmi auth v1 ";
    msg += role;
    msg += '\0';
    msg += channel_name(c.channel);
    msg += '\0';
    msg += std::to_string(c.pmiid);
    msg += '\0';
    msg.append(reinterpret_cast<const char*>(c.nonce.data()), c.nonce.size());
    return hmac_sha256(std::string_view(reinterpret_cast<const char*>(token.data()), token.size()), msg);
}

} // namespace

std::string client_hello(const Secret& token, int pmiid, Channel channel, const Secret& nonce)
{
    Claim c {pmiid, channel, nonce, {}};
    return pmi::format("hashi_auth",
        {{"v", "1"}, {"pmiid", std::to_string(pmiid)}, {"channel", channel_name(channel)}, {"nonce", to_hex(nonce)},
            {"proof", to_hex(mac(token, "client", c))}});
}

std::optional<Claim> parse_hello(std::string_view line, std::string& why)
{
    auto msg = pmi::parse(line, why);
    if (!msg) {
        return std::nullopt;
    }
    if (msg->cmd != "hashi_auth") {
        why = "first line is cmd=" + msg->cmd.substr(0, 32) + ", not an authentication";
        return std::nullopt;
    }
    if (msg->get("v") != "1") {
        why = "unknown authentication version";
        return std::nullopt;
    }
    Claim c;
    auto id = msg->get("pmiid").value_or("");
    auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), c.pmiid);
    if (ec != std::errc() || end != id.data() + id.size() || c.pmiid < 0) {
        why = "malformed pmiid";
        return std::nullopt;
    }
    auto ch = msg->get("channel");
    if (ch == "lifeline") {
        c.channel = Channel::lifeline;
    } else if (ch == "pmi") {
        c.channel = Channel::pmi;
    } else {
        why = "unknown channel";
        return std::nullopt;
    }
    auto nonce = secret_from_hex(msg->get("nonce").value_or(""));
    auto proof = secret_from_hex(msg->get("proof").value_or(""));
    if (!nonce || !proof) {
        why = "malformed nonce or proof";
        return std::nullopt;
    }
    c.nonce = *nonce;
    c.proof = *proof;
    return c;
}

bool proves(const Claim& claim, const Secret& token)
{
    return same_secret(claim.proof, mac(token, "client", claim));
}

std::string server_reply(const Secret& token, const Claim& claim)
{
    return pmi::format("hashi_auth_ok", {{"proof", to_hex(mac(token, "server", claim))}});
}

bool server_reply_ok(std::string_view line, const Secret& token, const Claim& claim)
{
    std::string why;
    auto msg = pmi::parse(line, why);
    if (!msg || msg->cmd != "hashi_auth_ok") {
        return false;
    }
    auto proof = secret_from_hex(msg->get("proof").value_or(""));
    return proof && same_secret(*proof, mac(token, "server", claim));
}

} // namespace hashi::mpiexec::pmi_auth
