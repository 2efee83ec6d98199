// SPDX-License-Identifier: BSD-3-Clause
// The bytes of the IMPI 0.0 startup protocol and of Hashi's extension to it
// (relay/README.md). Every message is an 8-byte header {Int4 cmd; Int4 len}
// and `len` payload bytes, every integer big-endian. Nothing else in relay/
// or mpiexec knows these bytes. Pure functions over byte spans, so the
// decoders can be driven by a fuzzer; no length field is trusted: each
// command has a hard payload limit checked before anything is buffered.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hashi::impi {

using Bytes = std::vector<std::uint8_t>;
using ByteView = std::span<const std::uint8_t>;

// IMPI command codes: four ASCII letters as a big-endian Int4.
namespace cmd {
constexpr std::uint32_t auth = 0x41555448; // "AUTH"
constexpr std::uint32_t impi = 0x494D5049; // "IMPI"
constexpr std::uint32_t coll = 0x434F4C4C; // "COLL"
constexpr std::uint32_t done = 0x444F4E45; // "DONE"
constexpr std::uint32_t fini = 0x46494E49; // "FINI"
// Hashi's private range: "HX" followed by two letters. An IMPI peer never
// sends these; the server sends them only to clients that announced the
// extension (label hashi_ext), except hx_error, which any client may get
// just before the server closes its connection.
constexpr std::uint32_t hx_error = 0x48584552; // "HXER" text: why the connection ends
constexpr std::uint32_t hx_job = 0x48584A42; // "HXJB" Uint8 job id, after DONE
constexpr std::uint32_t hx_barrier_in = 0x48584249; // "HXBI" a cluster's PMI barrier with its new keys
constexpr std::uint32_t hx_barrier_out = 0x4858424F; // "HXBO" all clusters' keys: the barrier is over
constexpr std::uint32_t hx_abort = 0x48584142; // "HXAB" Int4 client, Int4 code, text: the job fails
} // namespace cmd

// COLL labels (IMPI 0.0), plus Hashi's in the unused 0x7000 block.
namespace label {
constexpr std::uint32_t c_version = 0x1000;
constexpr std::uint32_t c_nhosts = 0x1100;
constexpr std::uint32_t c_nprocs = 0x1200;
constexpr std::uint32_t c_datalen = 0x1300;
constexpr std::uint32_t c_tagub = 0x1400;
constexpr std::uint32_t c_coll_xsize = 0x1500;
constexpr std::uint32_t c_coll_maxlinear = 0x1600;
constexpr std::uint32_t h_ipv6 = 0x2000;
constexpr std::uint32_t h_port = 0x2100;
constexpr std::uint32_t h_nprocs = 0x2200;
constexpr std::uint32_t h_ackmark = 0x2300;
constexpr std::uint32_t h_hiwater = 0x2400;
constexpr std::uint32_t p_ipv6 = 0x3000;
constexpr std::uint32_t p_pid = 0x3100;
constexpr std::uint32_t hashi_ext = 0x7000; // Uint4 extension version (1)
constexpr std::uint32_t hashi_p_host = 0x7100; // per proc: Int4 index of its host in the client
} // namespace label

constexpr std::uint32_t hashi_ext_version = 1;
constexpr std::uint32_t max_clients = 32; // IMPI: client_mask is 32 bits
constexpr std::uint32_t max_hosts_per_client = 4096;
constexpr std::uint32_t max_procs_per_client = 65536;
constexpr std::size_t header_size = 8;
constexpr std::size_t max_text = 1024; // hx_error and hx_abort texts
// A cluster's barrier contribution, and the server's combination of all.
constexpr std::size_t max_barrier_in = std::size_t {16} << 20;
constexpr std::size_t max_barrier_out = std::size_t {64} << 20;
constexpr std::size_t max_key = 64; // PMI-1 limits mpiexec announces
constexpr std::size_t max_value = 1024;

// Who sends the bytes being decoded: the limits differ (a client's COLL is
// one contribution, the server's is all clients' together).
enum class Sender { client, server };

// Largest payload allowed for `command` from `sender`; nullopt: unknown
// command (a protocol violation).
std::optional<std::size_t> payload_limit(std::uint32_t command, Sender sender);

// Name of a command for messages ("AUTH", "HXBI", or hex when unknown).
std::string command_name(std::uint32_t command);

struct Frame {
    std::uint32_t command = 0;
    Bytes payload;
};

struct DecodeResult {
    enum class Status { need_more, frame, error } status = Status::need_more;
    Frame frame; // when status == frame
    std::size_t consumed = 0; // bytes of the input the frame took
    std::string error; // when status == error: what was wrong
};

// Looks at the start of `bytes` for one whole message from `sender`.
DecodeResult decode_frame(ByteView bytes, Sender sender);

Bytes encode_frame(std::uint32_t command, ByteView payload);

// Big-endian cursor over a payload; every read checks the remaining length.
class Reader {
public:
    explicit Reader(ByteView bytes) : bytes_(bytes) { }
    std::optional<std::uint32_t> u32();
    std::optional<std::int32_t> i32();
    std::optional<std::uint64_t> u64();
    std::optional<ByteView> take(std::size_t n);
    [[nodiscard]] std::size_t remaining() const { return bytes_.size() - pos_; }
    [[nodiscard]] bool at_end() const { return pos_ == bytes_.size(); }

private:
    ByteView bytes_;
    std::size_t pos_ = 0;
};

class Writer {
public:
    Writer& u32(std::uint32_t v);
    Writer& i32(std::int32_t v) { return u32(static_cast<std::uint32_t>(v)); }
    Writer& u64(std::uint64_t v);
    Writer& bytes(ByteView b);
    Writer& text(std::string_view s);
    Bytes take() { return std::move(out_); }

private:
    Bytes out_;
};

// Startup payloads. Decoders return nullopt when the payload has the wrong
// size or shape; the caller names the command in its error.
struct ServerAuth { // server's AUTH answer: the chosen method and its data
    std::int32_t which = 0;
    Bytes data;
};
Bytes encode_server_auth(const ServerAuth& a);
std::optional<ServerAuth> decode_server_auth(ByteView payload);

struct CollIn { // a client's COLL: one label and its contribution
    std::uint32_t label = 0;
    Bytes data;
};
Bytes encode_coll_in(const CollIn& c);
std::optional<CollIn> decode_coll_in(ByteView payload);

struct CollOut { // the server's COLL: contributions of every client in client order
    std::uint32_t label = 0;
    std::uint32_t client_mask = 0;
    Bytes data;
};
Bytes encode_coll_out(const CollOut& c);
std::optional<CollOut> decode_coll_out(ByteView payload);

// Hashi extension payloads.
struct KvEntry {
    std::string key;
    std::string value;
    bool operator==(const KvEntry&) const = default;
};
struct Barrier { // HXBI and HXBO: {Uint4 epoch; Uint4 count; count * {Uint4 klen; key; Uint4 vlen; value}}
    std::uint32_t epoch = 0;
    std::vector<KvEntry> entries;
};
Bytes encode_barrier(const Barrier& b);
// Rejects keys or values over the PMI limits and control characters.
std::optional<Barrier> decode_barrier(ByteView payload);

struct Abort { // HXAB: which client failed, its exit code, why
    std::int32_t client = -1;
    std::int32_t code = 1;
    std::string reason;
};
Bytes encode_abort(const Abort& a);
std::optional<Abort> decode_abort(ByteView payload);

// HXER's text: printable ASCII only (it ends up on a terminal).
std::optional<std::string> decode_text(ByteView payload);

} // namespace hashi::impi
