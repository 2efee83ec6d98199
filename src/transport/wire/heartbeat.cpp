// SPDX-License-Identifier: BSD-3-Clause
#include "transport/wire/heartbeat.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstring>

namespace hashi::wire {

namespace {

constexpr std::uint8_t magic[4] = {'H', 'S', 'H', 'B'};
constexpr std::uint8_t version = 1;

void put64(std::uint8_t* p, std::uint64_t v) noexcept
{
    for (int i = 0; i < 8; ++i)
        p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

std::uint64_t get64(const std::uint8_t* p) noexcept
{
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i)
        v = v << 8 | p[i];
    return v;
}

// HMAC-SHA256 of the first heartbeat_mac_offset bytes. False only when
// OpenSSL fails, which then counts as a MAC that does not verify.
bool mac_of(const std::uint8_t* p, const job_key& key, std::uint8_t out[32]) noexcept
{
    unsigned int len = 0;
    return HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), p, heartbeat_mac_offset, out, &len) !=
        nullptr &&
        len == 32;
}

} // namespace

heartbeat_bytes encode_heartbeat(const heartbeat& h, const job_key& key) noexcept
{
    heartbeat_bytes b {};
    std::memcpy(&b[0], magic, sizeof magic);
    b[4] = version;
    b[5] = static_cast<std::uint8_t>(h.kind);
    // b[6..7] reserved
    put64(&b[8], h.sender);
    put64(&b[16], h.target);
    std::memcpy(&b[24], h.challenge.data(), ping_challenge_size);
    if (!mac_of(b.data(), key, &b[heartbeat_mac_offset]))
        b.fill(0); // decodes as garbage: the peer drops it and we count a missed answer
    return b;
}

std::variant<heartbeat, decode_error> decode_heartbeat(const std::uint8_t* p, std::size_t len) noexcept
{
    if (len != heartbeat_size)
        return decode_error {"heartbeat of " + std::to_string(len) + " bytes, expected " +
            std::to_string(heartbeat_size)};
    if (std::memcmp(p, magic, sizeof magic) != 0)
        return decode_error {"not a hashi heartbeat (bad magic)"};
    if (p[4] != version)
        return decode_error {"heartbeat version " + std::to_string(p[4]) + ", this provider speaks " +
            std::to_string(version)};
    if (p[5] != static_cast<std::uint8_t>(heartbeat_kind::ping) &&
        p[5] != static_cast<std::uint8_t>(heartbeat_kind::pong))
        return decode_error {"unknown heartbeat kind " + std::to_string(p[5])};
    if (p[6] != 0 || p[7] != 0)
        return decode_error {"non-zero reserved bytes in a heartbeat"};
    heartbeat h;
    h.kind = static_cast<heartbeat_kind>(p[5]);
    h.sender = get64(p + 8);
    h.target = get64(p + 16);
    std::memcpy(h.challenge.data(), p + 24, ping_challenge_size);
    return h;
}

bool verify_heartbeat(const std::uint8_t* p, const job_key& key) noexcept
{
    std::uint8_t want[32];
    if (!mac_of(p, key, want))
        return false;
    return CRYPTO_memcmp(want, p + heartbeat_mac_offset, sizeof want) == 0;
}

} // namespace hashi::wire
