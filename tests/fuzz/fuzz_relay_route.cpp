// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target: the relay route decoders (transport/wire/relay_route.hpp),
// fed any bytes a stranger could send a rank in place of its relay, or a
// relay in place of a rank. Decoding must never crash or read past the bytes
// given; what decodes must encode back to the same bytes; route_result, fed
// the bytes as a growing stream, must ask for more only while the message is
// incomplete, never for fewer bytes than it has, and agree with the decoding
// of the whole.
#include "transport/wire/relay_route.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <variant>
#include <vector>

namespace {

void check(bool ok)
{
    if (!ok)
        std::abort();
}

// A decoder of a fixed-size message that accepts must have been given
// exactly that many bytes, and its message encodes back to them.
template <class Msg, class Decode> void fixed(const std::uint8_t* p, std::size_t n, std::size_t size, Decode decode)
{
    auto d = decode(p, n);
    if (std::holds_alternative<hashi::wire::decode_error>(d))
        return;
    check(n == size);
    const auto again = hashi::wire::encode(std::get<Msg>(d));
    check(again.size() == n && std::memcmp(again.data(), p, n) == 0);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace hashi::wire;
    // Copies, so that a read past the given bytes is caught by ASan.
    const std::vector<std::uint8_t> bytes(data, data + size);
    const std::uint8_t* p = bytes.data();
    for (std::size_t n : {size, std::min<std::size_t>(size, route_request_size),
             std::min<std::size_t>(size, route_challenge_size), std::min<std::size_t>(size, route_proof_size),
             std::min<std::size_t>(size, relay_liveness_size)}) {
        const std::vector<std::uint8_t> cut(p, p + n);
        fixed<route_request>(cut.data(), n, route_request_size, decode_route_request);
        fixed<route_challenge>(cut.data(), n, route_challenge_size, decode_route_challenge);
        fixed<route_proof>(cut.data(), n, route_proof_size, decode_route_proof);
        fixed<relay_liveness>(cut.data(), n, relay_liveness_size, decode_relay_liveness);
    }
    // route_result as a stream: grow the prefix the way a reader would.
    const auto whole = decode_route_result(p, size);
    std::size_t have = 0;
    for (int step = 0; step < 4; ++step) {
        const std::vector<std::uint8_t> prefix(p, p + have);
        const auto d = decode_route_result(prefix.data(), have);
        if (const auto* m = std::get_if<need_more>(&d)) {
            check(m->bytes > have && m->bytes <= route_result_max_size);
            if (m->bytes > size) {
                // The stream ends short of the message: so must the whole.
                check(std::holds_alternative<need_more>(whole) || std::holds_alternative<decode_error>(whole));
                return 0;
            }
            have = m->bytes;
            continue;
        }
        if (const auto* r = std::get_if<route_result>(&d)) {
            check(r->encoded_size() == have);
            const auto again = encode(*r);
            check(again.size() == have && std::memcmp(again.data(), p, have) == 0);
            const auto* w = std::get_if<route_result>(&whole);
            check(w != nullptr && w->status == r->status && w->reason == r->reason);
        } else {
            // Refused on a prefix: refused whole too.
            check(std::holds_alternative<decode_error>(whole));
        }
        return 0;
    }
    std::abort(); // the header, then the reason: never more than two steps
}
