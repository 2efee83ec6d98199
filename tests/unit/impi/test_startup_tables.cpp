// SPDX-License-Identifier: BSD-3-Clause
// COLL labels: what a Hashi client contributes, the server's size checks,
// and the negotiation on the server's concatenations, with two clients
// simulated the way impi-server combines them.
#include "relay/impi/startup_tables.hpp"

#include <boost/test/unit_test.hpp>

using namespace hashi::impi;

namespace {

LocalClient cluster(int nhosts, std::vector<int> host_of_proc, std::uint32_t datalen = 65536)
{
    LocalClient c;
    for (int h = 0; h < nhosts; ++h) {
        c.host_addr.push_back(ipv4_mapped(0x7f000001u + static_cast<std::uint32_t>(h)));
    }
    c.host_of_proc = std::move(host_of_proc);
    c.datalen = datalen;
    return c;
}

// The server's rounds when every client sends the same labels in order.
std::map<std::uint32_t, CollOut> combine(const std::vector<LocalClient>& clients)
{
    std::map<std::uint32_t, CollOut> out;
    for (std::size_t k = 0; k < clients.size(); ++k) {
        ClientShape shape;
        for (const auto& c : contributions(clients[k])) {
            BOOST_REQUIRE_EQUAL(check_contribution(c.label, c.data, shape), "");
            auto& o = out[c.label];
            o.label = c.label;
            o.client_mask |= 1u << k;
            o.data.insert(o.data.end(), c.data.begin(), c.data.end());
        }
    }
    return out;
}

} // namespace

BOOST_AUTO_TEST_SUITE(impi_startup_tables)

BOOST_AUTO_TEST_CASE(two_clusters_negotiate)
{
    // Cluster 0: 2 hosts, ranks placed round-robin; cluster 1: 1 host.
    auto replies = combine({cluster(2, {0, 0, 1, 1}, 65536), cluster(1, {0, 0, 0}, 1024)});
    std::string error;
    auto f = negotiate(replies, 2, error);
    BOOST_REQUIRE_MESSAGE(f, error);
    BOOST_TEST(f->total_procs() == 7u);
    BOOST_TEST(f->rank_offset(1) == 4u);
    BOOST_TEST(f->host_offset(1) == 2u);
    BOOST_TEST(f->datalen == 1024u); // the minimum
    BOOST_TEST(f->tagub == 0x7fffffffu);
    BOOST_TEST(f->ackmark == 10u);
    BOOST_TEST(f->hiwater == 20u);
    BOOST_TEST(f->coll_xsize == -1);
    BOOST_TEST(f->clients[0].hashi);
    BOOST_TEST((f->clients[0].host_of_proc == std::vector<int> {0, 0, 1, 1}));
    BOOST_TEST((f->clients[1].host_of_proc == std::vector<int> {0, 0, 0}));
}

BOOST_AUTO_TEST_CASE(wrapped_placement_survives)
{
    auto replies = combine({cluster(2, {0, 1, 0, 1})});
    std::string error;
    auto f = negotiate(replies, 1, error);
    BOOST_REQUIRE_MESSAGE(f, error);
    BOOST_TEST((f->clients[0].host_of_proc == std::vector<int> {0, 1, 0, 1}));
}

BOOST_AUTO_TEST_CASE(server_checks_sizes_against_the_shape)
{
    ClientShape shape;
    Bytes four = Writer().u32(4).take();
    BOOST_TEST(check_contribution(label::h_port, four, shape).find("came before C_NHOSTS") != std::string::npos);
    BOOST_TEST(check_contribution(label::c_nhosts, Writer().u32(2).take(), shape) == "");
    BOOST_TEST(check_contribution(label::c_nprocs, four, shape) == "");
    BOOST_TEST(check_contribution(label::h_port, four, shape).find("must have 8 bytes") != std::string::npos);
    BOOST_TEST(check_contribution(label::p_pid, Bytes(32), shape) == "");
    BOOST_TEST(check_contribution(label::c_nhosts, Writer().u32(2).take(), shape).find("twice") != std::string::npos);
    ClientShape fresh;
    BOOST_TEST(
        check_contribution(label::c_nprocs, Writer().u32(0).take(), fresh).find("out of range") != std::string::npos);
    BOOST_TEST(check_contribution(label::c_version, Bytes(7), fresh) != "");
    BOOST_TEST(check_contribution(0x5555, Bytes(3), fresh) == ""); // opaque to the server
}

BOOST_AUTO_TEST_CASE(disagreement_is_an_error)
{
    auto replies = combine({cluster(1, {0}), cluster(1, {0})});
    auto& x = replies[label::c_coll_xsize];
    x.data = Writer().u32(0xffffffff).u32(2048).take();
    std::string error;
    BOOST_TEST(!negotiate(replies, 2, error));
    BOOST_TEST(error.find("C_COLL_XSIZE differs: client 0 says -1, client 1 says 2048") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(missing_client_or_label_is_an_error)
{
    auto replies = combine({cluster(1, {0})});
    std::string error;
    BOOST_TEST(!negotiate(replies, 2, error)); // a job of two, one answered
    replies.erase(label::h_nprocs);
    BOOST_TEST(!negotiate(replies, 1, error));
    BOOST_TEST(error.find("H_NPROCS") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(bad_host_index_is_an_error)
{
    auto replies = combine({cluster(2, {0, 1})});
    replies[label::hashi_p_host].data = Writer().u32(0).u32(5).take();
    std::string error;
    BOOST_TEST(!negotiate(replies, 1, error));
    BOOST_TEST(error.find("host 5 of 2") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
