// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target: every decoder of impi-relay, fed any bytes a stranger
// could send to a relay's WAN port (the trunk handshake, trunk frames once
// the stream is up) or that a server or relay sends in the startup (the
// relay tables). The first byte picks the decoder. Decoding must never
// crash or read past the input; what decodes must encode back to the same
// bytes (nothing is accepted that we would not send ourselves).
#include "relay/impi/relay_tables.hpp"
#include "relay/relay/trunk_wire.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <variant>

namespace {

template <class T, class V> void same(const V& again, const std::uint8_t* p, std::size_t n)
{
    if (again.size() != n || std::memcmp(again.data(), p, n) != 0) {
        std::abort();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace hashi;
    if (size == 0) {
        return 0;
    }
    const std::uint8_t which = data[0] % 9;
    const std::uint8_t* p = data + 1;
    const std::size_t n = size - 1;
    switch (which) {
    case 0:
        if (auto h = relay::decode_trunk_hello(p, n); auto* v = std::get_if<relay::trunk_hello>(&h)) {
            same<relay::trunk_hello>(relay::encode(*v), p, n);
        }
        break;
    case 1:
        if (auto c = relay::decode_trunk_challenge(p, n); auto* v = std::get_if<relay::trunk_challenge>(&c)) {
            same<relay::trunk_challenge>(relay::encode(*v), p, n);
        }
        break;
    case 2:
        if (auto c = relay::decode_trunk_proof(p, n); auto* v = std::get_if<relay::trunk_proof>(&c)) {
            same<relay::trunk_proof>(relay::encode(*v), p, n);
        }
        break;
    case 3:
        if (n >= relay::frame_header_size) {
            if (auto h = relay::decode_frame_header(p); auto* v = std::get_if<relay::frame_header>(&h)) {
                same<relay::frame_header>(relay::encode(*v), p, relay::frame_header_size);
                if (v->length > relay::max_payload) {
                    std::abort();
                }
            }
        }
        break;
    case 4:
        if (auto r = relay::decode_heartbeat_route(p, n); auto* v = std::get_if<relay::heartbeat_route>(&r)) {
            same<relay::heartbeat_route>(relay::encode(*v), p, relay::heartbeat_route_size);
        }
        break;
    case 5:
        if (auto r = relay::decode_reason(p, n); auto* v = std::get_if<std::string>(&r)) {
            if (v->size() != n || v->size() > relay::max_reason) {
                std::abort();
            }
        }
        break;
    case 6: {
        std::string error;
        if (auto r = impi::decode_relay_info({p, n}, error)) {
            same<impi::RelayInfo>(impi::encode_relay_info(*r), p, n);
        } else if (error.empty()) {
            std::abort(); // a refusal always says why
        }
        break;
    }
    case 7: {
        std::string error;
        if (auto t = impi::decode_relay_table({p, n}, error)) {
            same<impi::RelayTable>(impi::encode_relay_table(*t), p, n);
        } else if (error.empty()) {
            std::abort();
        }
        break;
    }
    case 8: {
        std::string error;
        if (auto l = impi::decode_relay_list({p, n}, error)) {
            same<impi::RelayAddress>(impi::encode_relay_list(*l), p, n);
        } else if (error.empty()) {
            std::abort();
        }
        break;
    }
    }
    return 0;
}
