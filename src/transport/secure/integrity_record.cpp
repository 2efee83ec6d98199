// SPDX-License-Identifier: BSD-3-Clause
#include "transport/secure/integrity_record.hpp"

#include <openssl/crypto.h>

namespace hashi::secure {

namespace {

std::uint32_t read_length(const std::uint8_t* p) noexcept
{
    return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
        static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

bool length_ok(std::uint32_t n) noexcept
{
    return n >= 1 && n <= max_record_payload;
}

} // namespace

bool record_sealer::seal(std::uint8_t* record, std::size_t len) noexcept
{
    for (int i = 0; i < 4; ++i)
        record[i] = static_cast<std::uint8_t>(len >> (8 * i));
    std::uint8_t* payload = record + record_header_size;
    if (!mac_.tag(counter_, record, record_header_size, payload, len, payload + len))
        return false;
    ++counter_;
    return true;
}

bool record_opener::decidable(const std::uint8_t* p, std::size_t len) const noexcept
{
    if (!failed_.empty())
        return true;
    if (len < record_header_size)
        return false;
    const std::uint32_t n = read_length(p);
    return !length_ok(n) || len >= n + record_overhead;
}

opened_record record_opener::open(const std::uint8_t* p, std::size_t len)
{
    opened_record r;
    if (!failed_.empty()) {
        r.what = opened_record::verdict::bad;
        r.reason = failed_;
        return r;
    }
    if (len < record_header_size)
        return r;
    const std::uint32_t n = read_length(p);
    if (!length_ok(n)) {
        failed_ = "integrity record " + std::to_string(counter_) + " claims a payload of " + std::to_string(n) +
            " bytes (allowed: 1 to " + std::to_string(max_record_payload) + ")";
    } else {
        if (len < n + record_overhead)
            return r;
        std::uint8_t expect[record_tag_size];
        const std::uint8_t* payload = p + record_header_size;
        if (!mac_.tag(counter_, p, record_header_size, payload, n, expect))
            failed_ = "integrity record " + std::to_string(counter_) + ": the MAC could not be computed (OpenSSL failed)";
        else if (CRYPTO_memcmp(expect, payload + n, record_tag_size) != 0)
            failed_ = "integrity record " + std::to_string(counter_) + " (" + std::to_string(n) + " bytes) fails " +
                mac_name(mac_.kind()) + " verification: changed, replayed, reordered, or sent under another key";
        else {
            ++counter_;
            r.what = opened_record::verdict::record;
            r.size = n + record_overhead;
            r.payload_len = n;
            return r;
        }
    }
    r.what = opened_record::verdict::bad;
    r.reason = failed_;
    return r;
}

} // namespace hashi::secure
