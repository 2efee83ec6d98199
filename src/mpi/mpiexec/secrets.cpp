// SPDX-License-Identifier: BSD-3-Clause
#include "secrets.hpp"

#include "relay/impi/auth.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <stdexcept>

namespace hashi::mpiexec {

Secret random_secret()
{
    return impi::random_nonce(); // the same 32 bytes from getrandom
}

Secret hmac_sha256(std::string_view key, std::string_view message)
{
    Secret out {};
    unsigned int len = 0;
    // HMAC() wants a non-null key pointer even for an empty key.
    static const unsigned char empty = 0;
    const auto* k = key.empty() ? &empty : reinterpret_cast<const unsigned char*>(key.data());
    if (HMAC(EVP_sha256(), k, static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(message.data()),
            message.size(), out.data(), &len) == nullptr ||
        len != out.size()) {
        throw std::runtime_error("HMAC-SHA256 failed (OpenSSL)");
    }
    return out;
}

Secret derive_job_key(std::string_view material, std::uint64_t job_id)
{
    std::string msg = "hashi rank key v1";
    for (int shift = 56; shift >= 0; shift -= 8) {
        msg += static_cast<char>((job_id >> shift) & 0xff);
    }
    return hmac_sha256(material, msg);
}

std::string to_hex(const Secret& s)
{
    static const char digits[] = "0123456789abcdef";
    std::string hex;
    hex.reserve(2 * s.size());
    for (auto b : s) {
        hex += digits[b >> 4];
        hex += digits[b & 0xf];
    }
    return hex;
}

std::optional<Secret> secret_from_hex(std::string_view hex)
{
    if (hex.size() != 2 * secret_size) {
        return std::nullopt;
    }
    auto nibble = [](char c) -> int {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        if (c >= 'A' && c <= 'F') {
            return c - 'A' + 10;
        }
        return -1;
    };
    Secret s {};
    for (std::size_t i = 0; i < s.size(); ++i) {
        int hi = nibble(hex[2 * i]);
        int lo = nibble(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            return std::nullopt;
        }
        s[i] = static_cast<std::uint8_t>(hi << 4 | lo);
    }
    return s;
}

bool same_secret(const Secret& a, const Secret& b)
{
    return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

} // namespace hashi::mpiexec
