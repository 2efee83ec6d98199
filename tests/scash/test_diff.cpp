// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of the twin/diff encoding (src/scash/diff.cpp).
#define BOOST_TEST_MODULE scash unit tests
#include "scash/diff.hpp"

#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <random>
#include <vector>

// Bytes print as nothing; the tests compare whole pages.
BOOST_TEST_DONT_PRINT_LOG_VALUE(std::byte)

using hashi::scash::apply_diff;
using hashi::scash::encode_diff;

namespace {

constexpr std::size_t kPage = 4096;

std::vector<std::byte> page_of(std::uint8_t fill)
{
    return std::vector<std::byte>(kPage, std::byte(fill));
}

} // namespace

BOOST_AUTO_TEST_CASE(unchanged_page_gives_empty_diff)
{
    auto twin = page_of(7), page = page_of(7);
    std::vector<std::byte> d;
    BOOST_TEST(encode_diff(twin, page, d) == 0u);
    BOOST_TEST(d.empty());
}

BOOST_AUTO_TEST_CASE(one_byte_change_is_one_run)
{
    auto twin = page_of(0), page = page_of(0);
    page[1234] = std::byte(9);
    std::vector<std::byte> d;
    BOOST_TEST(encode_diff(twin, page, d) == 5u); // 4-byte header + 1 byte
    auto home = page_of(0);
    BOOST_TEST(apply_diff(d, home));
    BOOST_TEST((home == page));
}

BOOST_AUTO_TEST_CASE(runs_are_byte_exact_so_disjoint_writers_merge)
{
    // Two writers start from the same twin and change interleaved bytes;
    // applying both diffs to the home must keep both writers' bytes.
    auto twin = page_of(0), a = page_of(0), b = page_of(0);
    for (std::size_t i = 0; i < kPage; i += 2)
        a[i] = std::byte(0xa);
    for (std::size_t i = 1; i < kPage; i += 2)
        b[i] = std::byte(0xb);
    std::vector<std::byte> da, db;
    encode_diff(twin, a, da);
    encode_diff(twin, b, db);
    auto home = page_of(0);
    BOOST_TEST(apply_diff(da, home));
    BOOST_TEST(apply_diff(db, home));
    for (std::size_t i = 0; i < kPage; ++i)
        BOOST_TEST((home[i] == std::byte(i % 2 ? 0xb : 0xa)));
}

BOOST_AUTO_TEST_CASE(whole_page_and_edges)
{
    auto twin = page_of(0), page = page_of(1);
    std::vector<std::byte> d;
    BOOST_TEST(encode_diff(twin, page, d) == kPage + 4);
    auto home = page_of(0);
    BOOST_TEST(apply_diff(d, home));
    BOOST_TEST((home == page));

    auto p2 = page_of(0);
    p2[0] = std::byte(1);
    p2[kPage - 1] = std::byte(2);
    d.clear();
    BOOST_TEST(encode_diff(twin, p2, d) == 10u);
    auto h2 = page_of(0);
    BOOST_TEST(apply_diff(d, h2));
    BOOST_TEST((h2 == p2));
}

BOOST_AUTO_TEST_CASE(random_pages_round_trip)
{
    std::mt19937 rng(42);
    for (int t = 0; t < 200; ++t) {
        auto twin = page_of(0);
        for (auto& x : twin)
            x = std::byte(rng() & 0xff);
        auto page = twin;
        const int changes = int(rng() % 300);
        for (int c = 0; c < changes; ++c) {
            const std::size_t at = rng() % kPage, len = 1 + rng() % 40;
            for (std::size_t i = at; i < std::min(kPage, at + len); ++i)
                page[i] = std::byte(rng() & 0xff);
        }
        std::vector<std::byte> d;
        encode_diff(twin, page, d);
        auto home = twin;
        BOOST_TEST_REQUIRE(apply_diff(d, home));
        BOOST_TEST_REQUIRE((home == page));
    }
}

BOOST_AUTO_TEST_CASE(large_pages_split_long_runs)
{
    // A 64 KiB page changed everywhere needs runs under the 16-bit length.
    std::vector<std::byte> twin(65536, std::byte(0)), page(65536, std::byte(3)), home(65536, std::byte(0));
    std::vector<std::byte> d;
    encode_diff(twin, page, d);
    BOOST_TEST(apply_diff(d, home));
    BOOST_TEST((home == page));
}

BOOST_AUTO_TEST_CASE(corrupt_diffs_are_rejected)
{
    auto home = page_of(0);
    std::vector<std::byte> truncated_header {std::byte(0), std::byte(0), std::byte(1)};
    BOOST_TEST(!apply_diff(truncated_header, home));
    // Run at offset 4095 of length 2: past the end of the page.
    std::vector<std::byte> outside {
        std::byte(0xff), std::byte(0x0f), std::byte(2), std::byte(0), std::byte(1), std::byte(1)};
    BOOST_TEST(!apply_diff(outside, home));
    // Length larger than the bytes that follow.
    std::vector<std::byte> short_body {std::byte(0), std::byte(0), std::byte(8), std::byte(0), std::byte(1)};
    BOOST_TEST(!apply_diff(short_body, home));
}
