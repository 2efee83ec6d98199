// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target: arbitrary bytes as they would arrive on an IMPI startup
// connection, cut into frames as impi-server (first byte even) or mpiexec
// (odd) cuts them, each payload handed to every decoder of its command,
// COLL contributions to the server's size checks, and the server's COLL
// answers to the negotiation. Nothing may crash, read out of bounds or
// accept a frame longer than its command's limit.
#include "relay/impi/startup_tables.hpp"
#include "relay/impi/wire.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>

using namespace hashi::impi;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size == 0) {
        return 0;
    }
    const Sender sender = (data[0] & 1) != 0 ? Sender::server : Sender::client;
    ByteView bytes(data + 1, size - 1);
    ClientShape shape;
    std::map<std::uint32_t, CollOut> replies;
    while (!bytes.empty()) {
        auto r = decode_frame(bytes, sender);
        if (r.status != DecodeResult::Status::frame) {
            break;
        }
        if (r.consumed < header_size || r.consumed > bytes.size() ||
            r.frame.payload.size() > *payload_limit(r.frame.command, sender)) {
            std::abort();
        }
        bytes = bytes.subspan(r.consumed);
        const auto& p = r.frame.payload;
        switch (r.frame.command) {
        case cmd::auth:
            (void)decode_server_auth(p);
            break;
        case cmd::coll:
            if (sender == Sender::client) {
                if (auto in = decode_coll_in(p)) {
                    (void)check_contribution(in->label, in->data, shape);
                }
            } else if (auto out = decode_coll_out(p)) {
                replies[out->label] = std::move(*out);
            }
            break;
        case cmd::hx_barrier_in:
        case cmd::hx_barrier_out:
            if (auto b = decode_barrier(p)) {
                // Whatever decodes must encode back to the same bytes.
                if (encode_barrier(*b) != p) {
                    std::abort();
                }
            }
            break;
        case cmd::hx_abort:
            (void)decode_abort(p);
            break;
        case cmd::hx_error:
            (void)decode_text(p);
            break;
        default:
            break;
        }
    }
    if (!replies.empty()) {
        std::string error;
        for (std::uint32_t n : {1u, 2u, 3u}) {
            if (auto f = negotiate(replies, n, error)) {
                (void)f->total_procs();
            }
        }
    }
    return 0;
}
