// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target: the hashi provider's frame decoding, fed a byte stream
// the way a connection would see it. Every header is decoded; a handshake's
// payload (all four handshake decoders) and every 32-byte window as a business card are decoded too.
// Decoding must never crash, read out of bounds or accept a frame whose
// length breaks the per-type bounds.
#include "transport/address.hpp"
#include "transport/wire/frame.hpp"
#include "transport/wire/handshake.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace hashi;
    std::size_t at = 0;
    while (size - at >= wire::header_size) {
        auto d = wire::decode_header(data + at);
        if (std::holds_alternative<wire::decode_error>(d))
            break; // the connection would be closed here
        const auto& h = std::get<wire::frame_header>(d);
        at += wire::header_size;
        if (h.type == wire::frame_type::msg || h.type == wire::frame_type::tagged) {
            if (h.length > wire::max_eager_payload)
                std::abort(); // decode_header let an oversized frame through
        }
        if (wire::is_handshake(h.type)) {
            if (h.length != wire::handshake_payload_size(h.type))
                std::abort(); // decode_header let a handshake of the wrong size through
            // Each handshake decoder on the payload, whatever the frame type
            // says: the endpoint picks the decoder from the type, but every
            // decoder must survive every input.
            const std::size_t n = std::min<std::size_t>(size - at, h.length);
            // A hello that decodes names a lane below the bound and encodes
            // back to the same bytes (lane and reserved bytes included).
            const auto hello = wire::decode_hello(data + at, n);
            if (const auto* hh = std::get_if<wire::hello>(&hello)) {
                if (hh->lane >= wire::max_lanes)
                    std::abort();
                const auto back = wire::encode(*hh);
                for (std::size_t i = 0; i < back.size(); ++i)
                    if (back[i] != data[at + i])
                        std::abort();
            }
            (void)wire::decode_challenge(data + at, n);
            (void)wire::decode_proof(data + at, n);
            (void)wire::decode_hello_ack(data + at, n);
        }
        // Round trip: what decodes must encode to the same bytes.
        const auto again = wire::encode_header(h);
        for (std::size_t i = 0; i < wire::header_size; ++i)
            if (again[i] != data[at - wire::header_size + i])
                std::abort();
        at += static_cast<std::size_t>(std::min<std::uint64_t>(h.length, size - at));
    }
    for (std::size_t i = 0; i + fi::address_size <= size && i < 256; ++i)
        (void)fi::endpoint_address::decode(data + i, fi::address_size);
    return 0;
}
