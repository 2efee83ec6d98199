// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target: the integrity stream's record decoder
// (transport/secure/integrity_record.hpp), fed any bytes a man in the middle
// could put on a connection. Opening must never crash or read past the
// bytes given, never accept a record it was not given whole, stay failed
// once failed, and agree with decidable(). Then the same bytes as payloads:
// what is sealed opens to the same bytes, in order, and a flipped bit
// anywhere in the sealed stream fails.
#include "transport/secure/integrity_record.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

hashi::secure::secret fuzz_key()
{
    hashi::secure::secret k {};
    for (std::size_t i = 0; i < k.size(); ++i)
        k[i] = static_cast<std::uint8_t>(5 * i + 9);
    return k;
}

void check(bool ok)
{
    if (!ok)
        std::abort();
}

void decode_raw(const std::uint8_t* data, std::size_t size, hashi::secure::mac_kind kind)
{
    using hashi::secure::opened_record;
    hashi::secure::record_opener o(kind, fuzz_key());
    std::size_t at = 0;
    for (;;) {
        const bool decidable = o.decidable(data + at, size - at);
        const opened_record r = o.open(data + at, size - at);
        check(decidable == (r.what != opened_record::verdict::need_more));
        if (r.what == opened_record::verdict::need_more)
            return;
        if (r.what == opened_record::verdict::bad) {
            check(!r.reason.empty());
            check(o.open(data, size).what == opened_record::verdict::bad); // dead from then on
            return;
        }
        check(r.size <= size - at && r.payload_len >= 1 && r.payload_len <= hashi::secure::max_record_payload &&
            r.size == r.payload_len + hashi::secure::record_overhead);
        at += r.size;
    }
}

void round_trip(const std::uint8_t* data, std::size_t size, hashi::secure::mac_kind kind)
{
    using namespace hashi::secure;
    if (size < 3)
        return;
    // First byte: record size step; second and third: which bit to flip.
    const std::size_t step = 1 + data[0] % 97;
    const std::size_t flip = (static_cast<std::size_t>(data[1]) << 8 | data[2]);
    data += 3;
    size -= 3;
    record_sealer s(kind, fuzz_key());
    std::vector<std::uint8_t> wire;
    for (std::size_t at = 0; at < size; at += step) {
        const std::size_t n = std::min(step, size - at);
        const std::size_t base = wire.size();
        wire.resize(base + n + record_overhead);
        std::memcpy(wire.data() + base + record_header_size, data + at, n);
        check(s.seal(wire.data() + base, n));
    }
    record_opener o(kind, fuzz_key());
    std::vector<std::uint8_t> back;
    for (std::size_t at = 0; at < wire.size();) {
        const opened_record r = o.open(wire.data() + at, wire.size() - at);
        check(r.what == opened_record::verdict::record);
        back.insert(back.end(), wire.begin() + at + record_header_size,
            wire.begin() + at + record_header_size + r.payload_len);
        at += r.size;
    }
    check(back.size() == size && (size == 0 || std::memcmp(back.data(), data, size) == 0));
    if (wire.empty())
        return;
    wire[(flip / 8) % wire.size()] ^= static_cast<std::uint8_t>(1u << (flip % 8));
    record_opener again(kind, fuzz_key());
    bool failed = false;
    for (std::size_t at = 0; at < wire.size() && !failed;) {
        const opened_record r = again.open(wire.data() + at, wire.size() - at);
        // A flipped length bit may leave a record that is never complete.
        if (r.what == opened_record::verdict::need_more)
            failed = true;
        else if (r.what == opened_record::verdict::bad)
            failed = true;
        else
            at += r.size;
    }
    check(failed);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    for (const auto kind : {hashi::secure::mac_kind::gmac, hashi::secure::mac_kind::hmac_sha256}) {
        decode_raw(data, size, kind);
        round_trip(data, size, kind);
    }
    return 0;
}
