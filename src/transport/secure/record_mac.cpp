// SPDX-License-Identifier: BSD-3-Clause
#include "transport/secure/record_mac.hpp"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <stdexcept>

namespace hashi::secure {

const char* mac_name(mac_kind k) noexcept
{
    return k == mac_kind::gmac ? "AES-256-GMAC" : "HMAC-SHA256-128";
}

record_mac::record_mac(mac_kind kind, const secret& key) : kind_(kind)
{
    bool ok = false;
    if (kind == mac_kind::gmac) {
        // Fetched once per process (a lookup by name in OpenSSL 3.0), as below.
        static EVP_CIPHER* const c = EVP_CIPHER_fetch(nullptr, "AES-256-GCM", nullptr);
        gcm_ = EVP_CIPHER_CTX_new();
        // The key schedule is computed once here; each record only sets the nonce.
        ok = c != nullptr && gcm_ != nullptr && EVP_EncryptInit_ex2(gcm_, c, key.data(), nullptr, nullptr) == 1;
    } else {
        static EVP_MAC* const m = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
        hmac_ = m != nullptr ? EVP_MAC_CTX_new(m) : nullptr;
        OSSL_PARAM params[] = {
            OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, const_cast<char*>("SHA256"), 0),
            OSSL_PARAM_construct_end()};
        ok = hmac_ != nullptr && EVP_MAC_init(hmac_, key.data(), key.size(), params) == 1;
    }
    if (!ok) {
        EVP_CIPHER_CTX_free(gcm_);
        EVP_MAC_CTX_free(hmac_);
        throw std::runtime_error(std::string("cannot set up ") + mac_name(kind) + " in OpenSSL");
    }
}

record_mac::~record_mac()
{
    EVP_CIPHER_CTX_free(gcm_);
    EVP_MAC_CTX_free(hmac_);
}

bool record_mac::tag(std::uint64_t counter, const std::uint8_t* header, std::size_t header_len,
    const std::uint8_t* payload, std::size_t len, std::uint8_t* out) noexcept
{
    std::uint8_t ctr[8];
    for (int i = 0; i < 8; ++i)
        ctr[i] = static_cast<std::uint8_t>(counter >> (8 * i));
    if (kind_ == mac_kind::gmac) {
        // 96-bit nonce: 4 zero bytes, then the counter.
        std::uint8_t iv[12] = {};
        for (int i = 0; i < 8; ++i)
            iv[4 + i] = ctr[i];
        int outl = 0;
        std::uint8_t none[16];
        return EVP_EncryptInit_ex2(gcm_, nullptr, nullptr, iv, nullptr) == 1 &&
            EVP_EncryptUpdate(gcm_, nullptr, &outl, ctr, sizeof ctr) == 1 &&
            EVP_EncryptUpdate(gcm_, nullptr, &outl, header, static_cast<int>(header_len)) == 1 &&
            (len == 0 || EVP_EncryptUpdate(gcm_, nullptr, &outl, payload, static_cast<int>(len)) == 1) &&
            EVP_EncryptFinal_ex(gcm_, none, &outl) == 1 &&
            EVP_CIPHER_CTX_ctrl(gcm_, EVP_CTRL_AEAD_GET_TAG, static_cast<int>(record_tag_size), out) == 1;
    }
    // A null key restarts HMAC under the key set in the constructor.
    std::uint8_t full[32];
    std::size_t outl = 0;
    const bool ok = EVP_MAC_init(hmac_, nullptr, 0, nullptr) == 1 && EVP_MAC_update(hmac_, ctr, sizeof ctr) == 1 &&
        EVP_MAC_update(hmac_, header, header_len) == 1 && EVP_MAC_update(hmac_, payload, len) == 1 &&
        EVP_MAC_final(hmac_, full, &outl, sizeof full) == 1 && outl == sizeof full;
    for (std::size_t i = 0; i < record_tag_size; ++i)
        out[i] = full[i];
    return ok;
}

} // namespace hashi::secure
