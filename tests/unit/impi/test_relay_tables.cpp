// SPDX-License-Identifier: BSD-3-Clause
// The relay extension of the IMPI startup (HXRJ, HXRT, HXRL): round trips,
// and the refusal of every out-of-range or inconsistent field.
#include "relay/impi/relay_tables.hpp"

#include <boost/test/unit_test.hpp>

using namespace hashi::impi;

namespace {

RelayInfo relay(int cluster, int id, int count)
{
    return {.cluster = cluster,
        .id = id,
        .count = count,
        .lan_ipv4 = 0x0a000001u + static_cast<std::uint32_t>(id),
        .lan_port = 4000,
        .wan_ipv4 = 0xc6120001u + static_cast<std::uint32_t>(cluster + 16 * id),
        .wan_port = 4001};
}

} // namespace

BOOST_AUTO_TEST_SUITE(impi_relay_tables)

BOOST_AUTO_TEST_CASE(relay_info_round_trip)
{
    const auto r = relay(3, 1, 2);
    const auto bytes = encode_relay_info(r);
    BOOST_TEST(bytes.size() == relay_info_size);
    std::string error;
    auto back = decode_relay_info(bytes, error);
    BOOST_REQUIRE(back.has_value());
    BOOST_TEST((*back == r));
    BOOST_TEST(describe(r) == "relay 1 of cluster 3 (LAN 10.0.0.2:4000, WAN 198.18.0.20:4001)");
}

BOOST_AUTO_TEST_CASE(relay_info_refuses_bad_fields)
{
    std::string error;
    auto bad = [&](RelayInfo r, const std::string& says) {
        error.clear();
        BOOST_TEST(!decode_relay_info(encode_relay_info(r), error).has_value());
        BOOST_TEST(error.find(says) != std::string::npos, error);
    };
    bad(relay(32, 0, 1), "cluster 32");
    bad(relay(-1, 0, 1), "cluster -1");
    bad(relay(0, 0, 9), "count 9");
    bad(relay(0, 0, 0), "count 0");
    bad(relay(0, 2, 2), "id 2");
    auto r = relay(0, 0, 1);
    r.lan_port = 0;
    bad(r, "port");
    r = relay(0, 0, 1);
    r.wan_ipv4 = 0;
    bad(r, "zero address");
    auto bytes = encode_relay_info(relay(0, 0, 1));
    bytes.pop_back();
    BOOST_TEST(!decode_relay_info(bytes, error).has_value());
    BOOST_TEST(error.find("27 bytes") != std::string::npos, error);
}

BOOST_AUTO_TEST_CASE(relay_table_round_trip_and_consistency)
{
    RelayTable t {.job_id = 0x1122334455667788ull, .relays = {relay(0, 0, 2), relay(0, 1, 2), relay(1, 0, 1)}};
    std::string error;
    auto back = decode_relay_table(encode_relay_table(t), error);
    BOOST_REQUIRE(back.has_value());
    BOOST_TEST(back->job_id == t.job_id);
    BOOST_TEST((back->relays == t.relays));

    RelayTable twice {.job_id = 1, .relays = {relay(0, 0, 2), relay(0, 0, 2)}};
    BOOST_TEST(!decode_relay_table(encode_relay_table(twice), error).has_value());
    BOOST_TEST(error.find("twice") != std::string::npos, error);

    RelayTable disagree {.job_id = 1, .relays = {relay(0, 0, 2), relay(0, 1, 3)}};
    BOOST_TEST(!decode_relay_table(encode_relay_table(disagree), error).has_value());
    BOOST_TEST(error.find("disagree") != std::string::npos, error);

    auto bytes = encode_relay_table(t);
    bytes.push_back(0);
    BOOST_TEST(!decode_relay_table(bytes, error).has_value());
    RelayTable empty {.job_id = 1, .relays = {}};
    BOOST_TEST(!decode_relay_table(encode_relay_table(empty), error).has_value());
}

BOOST_AUTO_TEST_CASE(relay_list_round_trip_and_text)
{
    std::vector<RelayAddress> list = {{0x0a000001, 4000}, {0x0a000002, 4002}};
    std::string error;
    auto back = decode_relay_list(encode_relay_list(list), error);
    BOOST_REQUIRE(back.has_value());
    BOOST_TEST((*back == list));
    BOOST_TEST(relay_list_text(list) == "10.0.0.1:4000,10.0.0.2:4002");
    BOOST_TEST(!decode_relay_list(encode_relay_list({}), error).has_value());
    BOOST_TEST(!decode_relay_list(encode_relay_list(std::vector<RelayAddress>(9, {1, 1})), error).has_value());
    BOOST_TEST(!decode_relay_list(encode_relay_list({{0, 4000}}), error).has_value());
}

BOOST_AUTO_TEST_CASE(payload_limits_know_the_relay_commands)
{
    BOOST_TEST(payload_limit(cmd::hx_relay_join, Sender::client).value_or(0) == relay_info_size);
    BOOST_TEST(!payload_limit(cmd::hx_relay_join, Sender::server).has_value());
    BOOST_TEST(payload_limit(cmd::hx_relay_table, Sender::server).value_or(0) == max_relay_table);
    BOOST_TEST(!payload_limit(cmd::hx_relay_table, Sender::client).has_value());
    BOOST_TEST(payload_limit(cmd::hx_relays, Sender::server).value_or(0) == max_relay_list);
}

BOOST_AUTO_TEST_SUITE_END()
