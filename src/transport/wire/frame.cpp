// SPDX-License-Identifier: BSD-3-Clause
#include "transport/wire/frame.hpp"

#include <cstring>

namespace hashi::wire {

namespace {
// Frames are little-endian, the byte order of every machine Hashi targets,
// so encoding is a copy there; the shifts keep it right elsewhere.
void put(std::uint8_t* p, std::uint64_t v, int bytes) noexcept
{
    for (int i = 0; i < bytes; ++i)
        p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
std::uint64_t get(const std::uint8_t* p, int bytes) noexcept
{
    std::uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i)
        v = v << 8 | p[i];
    return v;
}
constexpr std::uint8_t hello_magic[8] = {'H', 'A', 'S', 'H', 'I', 'W', 'P', 1};
} // namespace

header_bytes encode_header(const frame_header& h) noexcept
{
    header_bytes b {};
    b[0] = static_cast<std::uint8_t>(h.type);
    b[1] = h.flags;
    // b[2..3] reserved
    put(&b[4], h.seq, 4);
    put(&b[8], h.length, 8);
    put(&b[16], h.tag, 8);
    put(&b[24], h.data, 8);
    put(&b[32], h.a, 8);
    put(&b[40], h.b, 8);
    put(&b[48], h.c, 8);
    return b;
}

const char* frame_type_name(frame_type t) noexcept
{
    switch (t) {
    case frame_type::hello:
        return "hello";
    case frame_type::hello_ack:
        return "hello_ack";
    case frame_type::msg:
        return "msg";
    case frame_type::tagged:
        return "tagged";
    case frame_type::rts:
        return "rts";
    case frame_type::cts:
        return "cts";
    case frame_type::data:
        return "data";
    case frame_type::rma_write:
        return "rma_write";
    case frame_type::rma_write_ack:
        return "rma_write_ack";
    case frame_type::rma_read_req:
        return "rma_read_req";
    case frame_type::rma_read_resp:
        return "rma_read_resp";
    case frame_type::bye:
        return "bye";
    }
    return "unknown";
}

std::variant<frame_header, decode_error> decode_header(const std::uint8_t* p) noexcept
{
    frame_header h;
    const std::uint8_t type = p[0];
    if (type < static_cast<std::uint8_t>(frame_type::hello) || type > static_cast<std::uint8_t>(frame_type::bye))
        return decode_error {"unknown frame type " + std::to_string(type)};
    h.type = static_cast<frame_type>(type);
    h.flags = p[1];
    if (p[2] != 0 || p[3] != 0)
        return decode_error {
            std::string("reserved header bytes are not zero in a ") + frame_type_name(h.type) + " frame"};
    h.seq = static_cast<std::uint32_t>(get(&p[4], 4));
    h.length = get(&p[8], 8);
    h.tag = get(&p[16], 8);
    h.data = get(&p[24], 8);
    h.a = get(&p[32], 8);
    h.b = get(&p[40], 8);
    h.c = get(&p[48], 8);

    std::uint8_t allowed_flags = 0;
    std::uint64_t max_length = 0;
    std::uint64_t min_length = 0;
    switch (h.type) {
    case frame_type::hello:
    case frame_type::hello_ack:
        min_length = max_length = hello_size;
        break;
    case frame_type::msg:
    case frame_type::tagged:
        allowed_flags = flag_remote_data;
        max_length = max_eager_payload;
        break;
    case frame_type::rts:
        allowed_flags = flag_remote_data | flag_tagged;
        break;
    case frame_type::data:
    case frame_type::rma_write:
    case frame_type::rma_read_resp:
        max_length = max_chunk_payload;
        break;
    case frame_type::cts:
    case frame_type::rma_write_ack:
    case frame_type::rma_read_req:
    case frame_type::bye:
        break;
    }
    if ((h.flags & ~allowed_flags) != 0)
        return decode_error {
            "flags 0x" + std::to_string(h.flags) + " are not valid in a " + frame_type_name(h.type) + " frame"};
    if (h.length < min_length || h.length > max_length)
        return decode_error {std::string(frame_type_name(h.type)) + " frame with " + std::to_string(h.length) +
            " payload bytes (allowed " + std::to_string(min_length) + " to " + std::to_string(max_length) + ")"};
    return h;
}

std::array<std::uint8_t, hello_size> encode_hello(const hello& h) noexcept
{
    std::array<std::uint8_t, hello_size> b {};
    std::memcpy(&b[0], hello_magic, 8);
    put(&b[8], h.job_id, 8);
    std::memcpy(&b[16], h.from.data(), 32);
    std::memcpy(&b[48], h.to.data(), 32);
    put(&b[80], h.pid, 4);
    put(&b[84], static_cast<std::uint32_t>(h.status), 4);
    std::memcpy(&b[88], h.host.data(), std::min(h.host.size(), host_name_size - 1));
    return b;
}

std::variant<hello, decode_error> decode_hello(const std::uint8_t* p, std::size_t len) noexcept
{
    if (len != hello_size)
        return decode_error {"handshake of " + std::to_string(len) + " bytes, expected " + std::to_string(hello_size)};
    if (std::memcmp(p, hello_magic, 7) != 0)
        return decode_error {"not a hashi handshake (wrong magic): is something else connecting to this port?"};
    if (p[7] != hello_magic[7])
        return decode_error {"hashi wire protocol version " + std::to_string(p[7]) + ", this library speaks " +
            std::to_string(hello_magic[7])};
    hello h;
    h.job_id = get(&p[8], 8);
    std::memcpy(h.from.data(), &p[16], 32);
    std::memcpy(h.to.data(), &p[48], 32);
    h.pid = static_cast<std::uint32_t>(get(&p[80], 4));
    const auto status = static_cast<std::uint32_t>(get(&p[84], 4));
    if (status > static_cast<std::uint32_t>(hello_status::bad_version))
        return decode_error {"handshake status " + std::to_string(status) + " is unknown"};
    h.status = static_cast<hello_status>(status);
    const auto* host = reinterpret_cast<const char*>(&p[88]);
    const std::size_t n = strnlen(host, host_name_size);
    if (n == host_name_size)
        return decode_error {"host name in the handshake is not terminated"};
    for (std::size_t i = 0; i < n; ++i)
        if (host[i] < 0x21 || host[i] > 0x7e)
            return decode_error {"host name in the handshake has a non-printable byte"};
    h.host.assign(host, n);
    if (!fi::endpoint_address::decode(h.from.data(), h.from.size()))
        return decode_error {"the sender's address in the handshake is not a valid hashi address"};
    return h;
}

const char* hello_status_text(hello_status s) noexcept
{
    switch (s) {
    case hello_status::ok:
        return "accepted";
    case hello_status::duplicate:
        return "duplicate connection (the peer's own connection is used)";
    case hello_status::wrong_job:
        return "the peer belongs to a different job (HASHI_JOB_ID differs)";
    case hello_status::wrong_endpoint:
        return "the peer at that port is not the endpoint in the address (stale address?)";
    case hello_status::bad_version:
        return "the peer speaks another wire protocol version";
    }
    return "unknown";
}

} // namespace hashi::wire
