// SPDX-License-Identifier: BSD-3-Clause
#include "wire.hpp"

#include "relay/impi/relay_tables.hpp"

#include <cstdio>

namespace hashi::impi {
namespace {

// Every byte of a text or PMI key/value must be printable: they end up on
// terminals and in PMI lines, where a space or newline would break framing.
bool printable(ByteView b, bool allow_space)
{
    for (auto c : b) {
        if (c < 0x20 || c > 0x7e || (!allow_space && c == ' ')) {
            return false;
        }
    }
    return true;
}

std::string to_string(ByteView b)
{
    return {reinterpret_cast<const char*>(b.data()), b.size()};
}

} // namespace

std::optional<std::size_t> payload_limit(std::uint32_t command, Sender sender)
{
    const bool from_server = sender == Sender::server;
    switch (command) {
    case cmd::auth:
        // client: mask (4), key (8), nonce + proof (64);
        // server: {which, len} + at most a 32-byte nonce or proof.
        return from_server ? 8 + 32 : 64;
    case cmd::impi:
        return 4;
    case cmd::coll:
        // The largest label is a per-proc IPv6 address.
        return from_server ? 8 + std::size_t {max_clients} * max_procs_per_client * 16
                           : 4 + std::size_t {max_procs_per_client} * 16;
    case cmd::done:
    case cmd::fini:
        return 0;
    case cmd::hx_error:
        return max_text;
    case cmd::hx_job:
        return 8;
    case cmd::hx_barrier_in:
        return from_server ? std::nullopt : std::optional<std::size_t>(max_barrier_in);
    case cmd::hx_barrier_out:
        return from_server ? std::optional<std::size_t>(max_barrier_out) : std::nullopt;
    case cmd::hx_abort:
        return 8 + max_text;
    case cmd::hx_relay_join:
        return from_server ? std::nullopt : std::optional<std::size_t>(relay_info_size);
    case cmd::hx_relay_table:
        return from_server ? std::optional<std::size_t>(max_relay_table) : std::nullopt;
    case cmd::hx_relays:
        return from_server ? std::optional<std::size_t>(max_relay_list) : std::nullopt;
    default:
        return std::nullopt;
    }
}

std::string command_name(std::uint32_t command)
{
    std::string s;
    for (int shift = 24; shift >= 0; shift -= 8) {
        auto c = static_cast<char>((command >> shift) & 0xff);
        if (c < 'A' || c > 'Z') {
            char hex[16];
            std::snprintf(hex, sizeof hex, "0x%08x", command);
            return hex;
        }
        s += c;
    }
    return s;
}

DecodeResult decode_frame(ByteView bytes, Sender sender)
{
    DecodeResult r;
    if (bytes.size() < header_size) {
        return r;
    }
    Reader in(bytes.first(header_size));
    std::uint32_t command = *in.u32();
    std::uint32_t len = *in.u32();
    auto limit = payload_limit(command, sender);
    if (!limit) {
        r.status = DecodeResult::Status::error;
        r.error = "unknown command " + command_name(command) + " (length " + std::to_string(len) + ")";
        return r;
    }
    if (len > *limit) {
        r.status = DecodeResult::Status::error;
        r.error = command_name(command) + " with a payload of " + std::to_string(len) + " bytes (at most " +
            std::to_string(*limit) + " allowed)";
        return r;
    }
    if (bytes.size() - header_size < len) {
        return r;
    }
    r.status = DecodeResult::Status::frame;
    r.frame.command = command;
    auto payload = bytes.subspan(header_size, len);
    r.frame.payload.assign(payload.begin(), payload.end());
    r.consumed = header_size + len;
    return r;
}

Bytes encode_frame(std::uint32_t command, ByteView payload)
{
    Writer w;
    w.u32(command).u32(static_cast<std::uint32_t>(payload.size())).bytes(payload);
    return w.take();
}

std::optional<std::uint32_t> Reader::u32()
{
    auto b = take(4);
    if (!b) {
        return std::nullopt;
    }
    return (std::uint32_t {(*b)[0]} << 24) | (std::uint32_t {(*b)[1]} << 16) | (std::uint32_t {(*b)[2]} << 8) |
        std::uint32_t {(*b)[3]};
}

std::optional<std::int32_t> Reader::i32()
{
    auto v = u32();
    return v ? std::optional<std::int32_t>(static_cast<std::int32_t>(*v)) : std::nullopt;
}

std::optional<std::uint64_t> Reader::u64()
{
    auto hi = u32();
    auto lo = hi ? u32() : std::nullopt;
    return lo ? std::optional<std::uint64_t>((std::uint64_t {*hi} << 32) | *lo) : std::nullopt;
}

std::optional<ByteView> Reader::take(std::size_t n)
{
    if (n > remaining()) {
        return std::nullopt;
    }
    auto b = bytes_.subspan(pos_, n);
    pos_ += n;
    return b;
}

Writer& Writer::u32(std::uint32_t v)
{
    for (int shift = 24; shift >= 0; shift -= 8) {
        out_.push_back(static_cast<std::uint8_t>(v >> shift));
    }
    return *this;
}

Writer& Writer::u64(std::uint64_t v)
{
    return u32(static_cast<std::uint32_t>(v >> 32)).u32(static_cast<std::uint32_t>(v));
}

Writer& Writer::bytes(ByteView b)
{
    out_.insert(out_.end(), b.begin(), b.end());
    return *this;
}

Writer& Writer::text(std::string_view s)
{
    return bytes({reinterpret_cast<const std::uint8_t*>(s.data()), s.size()});
}

Bytes encode_server_auth(const ServerAuth& a)
{
    return Writer().i32(a.which).u32(static_cast<std::uint32_t>(a.data.size())).bytes(a.data).take();
}

std::optional<ServerAuth> decode_server_auth(ByteView payload)
{
    Reader in(payload);
    auto which = in.i32();
    auto len = which ? in.u32() : std::nullopt;
    if (!len || *len != in.remaining()) {
        return std::nullopt;
    }
    auto rest = *in.take(*len);
    return ServerAuth {*which, Bytes(rest.begin(), rest.end())};
}

Bytes encode_coll_in(const CollIn& c)
{
    return Writer().u32(c.label).bytes(c.data).take();
}

std::optional<CollIn> decode_coll_in(ByteView payload)
{
    Reader in(payload);
    auto l = in.u32();
    if (!l) {
        return std::nullopt;
    }
    auto rest = *in.take(in.remaining());
    return CollIn {*l, Bytes(rest.begin(), rest.end())};
}

Bytes encode_coll_out(const CollOut& c)
{
    return Writer().u32(c.label).u32(c.client_mask).bytes(c.data).take();
}

std::optional<CollOut> decode_coll_out(ByteView payload)
{
    Reader in(payload);
    auto l = in.u32();
    auto mask = l ? in.u32() : std::nullopt;
    if (!mask) {
        return std::nullopt;
    }
    auto rest = *in.take(in.remaining());
    return CollOut {*l, *mask, Bytes(rest.begin(), rest.end())};
}

Bytes encode_barrier(const Barrier& b)
{
    Writer w;
    w.u32(b.epoch).u32(static_cast<std::uint32_t>(b.entries.size()));
    for (const auto& e : b.entries) {
        w.u32(static_cast<std::uint32_t>(e.key.size())).text(e.key);
        w.u32(static_cast<std::uint32_t>(e.value.size())).text(e.value);
    }
    return w.take();
}

std::optional<Barrier> decode_barrier(ByteView payload)
{
    Reader in(payload);
    auto epoch = in.u32();
    auto count = epoch ? in.u32() : std::nullopt;
    // Each entry takes at least 9 bytes (two lengths, a non-empty key), so
    // a count larger than that bound is a lie and is not reserved for.
    if (!count || *count > in.remaining() / 9) {
        return std::nullopt;
    }
    Barrier b;
    b.epoch = *epoch;
    b.entries.reserve(*count);
    for (std::uint32_t i = 0; i < *count; ++i) {
        auto klen = in.u32();
        if (!klen || *klen == 0 || *klen > max_key) {
            return std::nullopt;
        }
        auto key = in.take(*klen);
        auto vlen = key ? in.u32() : std::nullopt;
        if (!vlen || *vlen > max_value) {
            return std::nullopt;
        }
        auto value = in.take(*vlen);
        if (!value || !printable(*key, false) || !printable(*value, false)) {
            return std::nullopt;
        }
        b.entries.push_back({to_string(*key), to_string(*value)});
    }
    if (!in.at_end()) {
        return std::nullopt;
    }
    return b;
}

Bytes encode_abort(const Abort& a)
{
    return Writer().i32(a.client).i32(a.code).text(a.reason.substr(0, max_text)).take();
}

std::optional<Abort> decode_abort(ByteView payload)
{
    Reader in(payload);
    auto client = in.i32();
    auto code = client ? in.i32() : std::nullopt;
    if (!code) {
        return std::nullopt;
    }
    auto reason = decode_text(*in.take(in.remaining()));
    if (!reason) {
        return std::nullopt;
    }
    return Abort {*client, *code, *reason};
}

std::optional<std::string> decode_text(ByteView payload)
{
    if (payload.size() > max_text || !printable(payload, true)) {
        return std::nullopt;
    }
    return to_string(payload);
}

} // namespace hashi::impi
