// SPDX-License-Identifier: BSD-3-Clause
#include "transport/secure/key_schedule.hpp"

#include <openssl/core_names.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include <stdexcept>

namespace hashi::secure {

namespace {

// Fixed: HKDF's salt only has to be independent of the key; a version in it
// lets a later derivation scheme never collide with this one.
constexpr std::string_view salt = "hashi connection secret v1";

void append(std::vector<std::uint8_t>& out, std::span<const std::uint8_t> bytes)
{
    out.insert(out.end(), bytes.begin(), bytes.end());
}

void append_le(std::vector<std::uint8_t>& out, std::uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; ++i)
        out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

} // namespace

std::vector<std::uint8_t> transcript_binding(const fi::handshake_transcript& t)
{
    std::vector<std::uint8_t> b;
    b.reserve(8 + t.connector.size() + t.acceptor.size() + 2 * wire::nonce_size + 4);
    append_le(b, t.job_id, 8);
    append(b, t.connector);
    append(b, t.acceptor);
    append(b, t.connector_nonce);
    append(b, t.acceptor_nonce);
    append_le(b, static_cast<std::uint32_t>(t.status), 4);
    return b;
}

secret derive_secret(std::span<const std::uint8_t> key, std::span<const std::uint8_t> binding,
    std::string_view label)
{
    // info = label || 0 || binding: labels hold no NUL, so no (label,
    // binding) pair reads as another.
    std::vector<std::uint8_t> info(label.begin(), label.end());
    info.push_back(0);
    append(info, binding);

    secret out {};
    // Fetched once: a fetch costs about as much as the derivation itself
    // (OpenSSL 3.0 looks the algorithm up by name each time).
    static EVP_KDF* const kdf = EVP_KDF_fetch(nullptr, "HKDF", nullptr);
    EVP_KDF_CTX* kc = kdf != nullptr ? EVP_KDF_CTX_new(kdf) : nullptr;
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, const_cast<char*>("SHA256"), 0),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, const_cast<std::uint8_t*>(key.data()), key.size()),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, const_cast<char*>(salt.data()), salt.size()),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info.data(), info.size()),
        OSSL_PARAM_construct_end()};
    const bool ok = kc != nullptr && EVP_KDF_derive(kc, out.data(), out.size(), params) == 1;
    EVP_KDF_CTX_free(kc);
    if (!ok)
        throw std::runtime_error("HKDF-SHA256 failed in OpenSSL (is the default provider loaded?)");
    return out;
}

} // namespace hashi::secure
