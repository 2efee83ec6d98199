// SPDX-License-Identifier: BSD-3-Clause
// The forms every program accepts for numbers and switches, and the one
// message that names what was read, the bad text and what is accepted.
#include "common/number_text.hpp"

#include <boost/test/unit_test.hpp>

using namespace hashi;

namespace {

std::string whole_error(std::string_view label, std::string_view text, const WholeRange& range)
{
    std::string error;
    BOOST_TEST(!parse_whole(label, text, range, error).has_value());
    return error;
}

} // namespace

BOOST_AUTO_TEST_SUITE(number_text)

BOOST_AUTO_TEST_CASE(whole_numbers_in_range)
{
    std::string error;
    BOOST_TEST(parse_whole("option -n", "4", {.lo = 1, .hi = 8}, error).value() == 4u);
    BOOST_TEST(parse_whole("option -n", "1", {.lo = 1, .hi = 8}, error).value() == 1u);
    BOOST_TEST(parse_whole("option -n", "8", {.lo = 1, .hi = 8}, error).value() == 8u);
    BOOST_TEST(parse_whole("X=", "18446744073709551615", {}, error).value() == 18446744073709551615ull);
    BOOST_TEST(error.empty());
}

BOOST_AUTO_TEST_CASE(whole_number_errors_name_label_text_and_range)
{
    const WholeRange r {.lo = 1, .hi = 1048576};
    BOOST_TEST(whole_error("option -n", "many", r) == "option -n 'many' is not a whole number from 1 to 1048576");
    BOOST_TEST(whole_error("option -n", "0", r) == "option -n '0' is not a whole number from 1 to 1048576");
    BOOST_TEST(whole_error("HASHI_X=", "2x", r) == "HASHI_X='2x' is not a whole number from 1 to 1048576");
    BOOST_TEST(whole_error("T=", "9", {.lo = 1, .hi = 5, .unit = "seconds"}) ==
        "T='9' is not a whole number from 1 to 5 seconds");
    // No sign, no spaces, nothing empty, nothing past 64 bits.
    for (const char* bad : {"-3", "+3", " 3", "3 ", "", "18446744073709551616", "3.0", "0x10"})
        BOOST_TEST(!whole_error("v", bad, {}).empty(), bad);
}

BOOST_AUTO_TEST_CASE(size_suffixes)
{
    std::string error;
    const WholeRange r {.hi = 1ULL << 30, .size_suffix = true};
    BOOST_TEST(parse_whole("S=", "64", r, error).value() == 64u);
    BOOST_TEST(parse_whole("S=", "4k", r, error).value() == 4096u);
    BOOST_TEST(parse_whole("S=", "2M", r, error).value() == 2u << 20);
    BOOST_TEST(parse_whole("S=", "1G", r, error).value() == 1u << 30);
    BOOST_TEST(whole_error("S=", "2G", r) ==
        "S='2G' is not a whole number from 0 to 1073741824 (a K, M or G suffix is allowed)");
    BOOST_TEST(!whole_error("S=", "1KB", r).empty());
    BOOST_TEST(!whole_error("S=", "K", r).empty());
    // Without size_suffix a suffix is junk.
    BOOST_TEST(!whole_error("S=", "4k", {}).empty());
    // A suffix that would overflow 64 bits is out of range, not wrapped.
    BOOST_TEST(!whole_error("S=", "17179869184G", {.size_suffix = true}).empty());
}

BOOST_AUTO_TEST_CASE(hexadecimal)
{
    std::string error;
    BOOST_TEST(parse_whole("B=", "200000000000", {.base = 16}, error).value() == 0x200000000000ull);
    BOOST_TEST(parse_whole("B=", "0x1F", {.base = 16}, error).value() == 0x1fu);
    BOOST_TEST(
        whole_error("B=", "zz", {.hi = 0xff, .base = 16}) == "B='zz' is not a hexadecimal number from 0x0 to 0xff");
    BOOST_TEST(!whole_error("B=", "0x", {.base = 16}).empty());
}

BOOST_AUTO_TEST_CASE(decimals)
{
    std::string error;
    const DecimalRange r {.lo = 0, .hi = 60000, .unit = "milliseconds", .note = "fractions allowed, e.g. 2.5"};
    BOOST_TEST(parse_decimal("DELAY_MS", "2.5", r, error).value() == 2.5);
    BOOST_TEST(parse_decimal("DELAY_MS", "0", r, error).value() == 0.0);
    for (const char* bad : {"10ms", "-1", "60001", "inf", "nan", ""}) {
        error.clear();
        BOOST_TEST(!parse_decimal("DELAY_MS", bad, r, error).has_value(), bad);
        BOOST_TEST(error ==
            "DELAY_MS '" + std::string(bad) +
                "' is not a number from 0 to 60000 milliseconds (fractions allowed, e.g. 2.5)");
    }
}

BOOST_AUTO_TEST_CASE(switches)
{
    std::string error;
    for (const char* on : {"on", "ON", "yes", "true", "1", "True"})
        BOOST_TEST(parse_switch("S=", on, error).value(), on);
    for (const char* off : {"off", "no", "false", "0", "No"})
        BOOST_TEST(!parse_switch("S=", off, error).value(), off);
    BOOST_TEST(!parse_switch("HASHI_COLL=", "maybe", error).has_value());
    BOOST_TEST(error == "HASHI_COLL='maybe' is not on or off (or yes/no, true/false, 1/0)");
    BOOST_TEST(!parse_switch("S=", "2", error).has_value());
}

BOOST_AUTO_TEST_SUITE_END()
