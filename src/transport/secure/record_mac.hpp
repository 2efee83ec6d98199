// SPDX-License-Identifier: BSD-3-Clause
// The tag of an integrity record (integrity_record.hpp): a 16-byte MAC under
// one direction's key over the record counter, the header and the payload.
// Two constructions, measured against each other in bench/secure:
// - gmac: AES-256-GCM with an empty plaintext and everything as AAD, the
//   counter as the nonce (unique per key: one key per direction and per
//   connection, one counter value per record);
// - hmac_sha256: HMAC-SHA256, truncated to 128 bits (as RFC 4868 does).
#pragma once

#include "transport/secure/key_schedule.hpp"

#include <cstddef>
#include <cstdint>

struct evp_cipher_ctx_st;
struct evp_mac_ctx_st;

namespace hashi::secure {

enum class mac_kind { gmac, hmac_sha256 };

const char* mac_name(mac_kind k) noexcept;

inline constexpr std::size_t record_tag_size = 16;

class record_mac {
public:
    // Throws std::runtime_error when OpenSSL cannot set the key up.
    record_mac(mac_kind kind, const secret& key);
    ~record_mac();
    record_mac(const record_mac&) = delete;
    record_mac& operator=(const record_mac&) = delete;

    mac_kind kind() const noexcept { return kind_; }

    // Writes the tag over counter || header || payload to out (16 bytes).
    // False only when OpenSSL fails.
    bool tag(std::uint64_t counter, const std::uint8_t* header, std::size_t header_len, const std::uint8_t* payload,
        std::size_t len, std::uint8_t* out) noexcept;

private:
    mac_kind kind_;
    evp_cipher_ctx_st* gcm_ = nullptr;
    evp_mac_ctx_st* hmac_ = nullptr;
};

} // namespace hashi::secure
