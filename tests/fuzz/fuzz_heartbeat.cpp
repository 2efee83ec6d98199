// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target: the liveness datagram decoder and MAC check, fed any
// bytes a stranger could send to an endpoint's UDP port. Decoding must never
// crash or read past the datagram; what decodes must encode back to the
// same 40 bytes before the MAC; and nothing but a datagram made with the
// key may verify.
#include "transport/wire/heartbeat.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace hashi;
    wire::job_key key {};
    for (std::size_t i = 0; i < key.size(); ++i)
        key[i] = static_cast<std::uint8_t>(7 * i + 1);
    auto d = wire::decode_heartbeat(data, size);
    if (std::holds_alternative<wire::decode_error>(d))
        return 0;
    if (size != wire::heartbeat_size)
        std::abort(); // the decoder accepted a datagram of the wrong size
    const auto& h = std::get<wire::heartbeat>(d);
    const auto again = wire::encode_heartbeat(h, key);
    if (std::memcmp(again.data(), data, wire::heartbeat_mac_offset) != 0)
        std::abort();
    if (!wire::verify_heartbeat(again.data(), key))
        std::abort();
    // The fuzzer's bytes verify only if they are exactly what we would send.
    if (wire::verify_heartbeat(data, key) && std::memcmp(again.data(), data, wire::heartbeat_size) != 0)
        std::abort();
    return 0;
}
