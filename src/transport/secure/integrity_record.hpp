// SPDX-License-Identifier: BSD-3-Clause
// The integrity stream's record, the only bytes on such a connection:
//
//   [4 bytes little-endian: payload length, 1 .. max_record_payload]
//   [payload]
//   [16 bytes: tag over counter || length field || payload]
//
// The counter is the record's number in its direction (0, 1, ...), known to
// both sides and never sent: a record replayed, dropped or moved gets a
// different counter and fails; the tag covers the whole record, so a cut
// inside one fails too. Each direction has its own key (key_schedule.hpp),
// so a record reflected back to its sender fails as well. Lengths above the
// bound (and hence bits above it) are malformed before any tag is checked,
// which bounds what a receiver buffers for one record.
#pragma once

#include "transport/secure/record_mac.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace hashi::secure {

inline constexpr std::size_t record_header_size = 4;
inline constexpr std::size_t max_record_payload = 16384;
inline constexpr std::size_t record_overhead = record_header_size + record_tag_size;
inline constexpr std::size_t max_record_size = max_record_payload + record_overhead;

class record_sealer {
public:
    record_sealer(mac_kind kind, const secret& key) : mac_(kind, key) {}

    // `record` has room for record_overhead + len bytes and holds the
    // payload at record + record_header_size; writes the header and the tag.
    // 1 <= len <= max_record_payload. False only when OpenSSL fails.
    bool seal(std::uint8_t* record, std::size_t len) noexcept;

    std::uint64_t records() const noexcept { return counter_; }
    mac_kind kind() const noexcept { return mac_.kind(); }

private:
    record_mac mac_;
    std::uint64_t counter_ = 0;
};

struct opened_record {
    enum class verdict { need_more, record, bad };
    verdict what = verdict::need_more;
    std::size_t size = 0; // record: bytes of the whole record
    std::size_t payload_len = 0; // record: payload at p + record_header_size
    std::string reason; // bad: what was wrong
};

class record_opener {
public:
    record_opener(mac_kind kind, const secret& key) : mac_(kind, key) {}

    // Looks at the bytes received so far, [p, p + len), starting at a record
    // boundary. need_more: no complete record yet (a valid header whose
    // record is still incomplete, or less than a header); record: the first
    // record verified (the counter moves on); bad: malformed or failed
    // verification (the opener stays failed: every later call says bad).
    opened_record open(const std::uint8_t* p, std::size_t len);

    // Whether open() on these bytes would answer without more input (a
    // complete record or a malformed header), without verifying anything.
    bool decidable(const std::uint8_t* p, std::size_t len) const noexcept;

    std::uint64_t records() const noexcept { return counter_; }

private:
    record_mac mac_;
    std::uint64_t counter_ = 0;
    std::string failed_;
};

} // namespace hashi::secure
