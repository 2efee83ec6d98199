// SPDX-License-Identifier: BSD-3-Clause
#include "mpi/mpiexec/pmi_wire.hpp"

#include <boost/test/unit_test.hpp>

using namespace hashi::mpiexec;

BOOST_AUTO_TEST_SUITE(pmi_wire)

BOOST_AUTO_TEST_CASE(parses_what_mpich_sends)
{
    std::string err;
    auto m = pmi::parse("cmd=put kvsname=kvs_1 key=bc-3 value=a=b:c\n", err);
    BOOST_REQUIRE(m);
    BOOST_TEST(m->cmd == "put");
    BOOST_TEST(m->get("kvsname").value() == "kvs_1");
    BOOST_TEST(m->get("key").value() == "bc-3");
    BOOST_TEST(m->get("value").value() == "a=b:c"); // values may hold '='
    BOOST_TEST(!m->get("missing"));

    auto init = pmi::parse("cmd=init pmi_version=1 pmi_subversion=1", err);
    BOOST_REQUIRE(init);
    BOOST_TEST(init->cmd == "init");
    auto spawn = pmi::parse("mcmd=spawn\n", err);
    BOOST_REQUIRE(spawn);
    BOOST_TEST(spawn->cmd == "spawn");
    auto empty_value = pmi::parse("cmd=get_result rc=0 value=", err);
    BOOST_REQUIRE(empty_value);
    BOOST_TEST(empty_value->get("value").value().empty());
}

BOOST_AUTO_TEST_CASE(rejects_malformed_lines)
{
    for (const char* bad :
        {"", "\n", "put key=a", "key=a cmd=put", "cmd= x=1", "cmd=put junk", "cmd=put =v", "cmd=put key=a\x01"}) {
        std::string err;
        BOOST_TEST_INFO("line: " << bad);
        BOOST_TEST(!pmi::parse(bad, err));
        BOOST_TEST(!err.empty());
    }
    std::string err;
    BOOST_TEST(!pmi::parse("cmd=put value=" + std::string(2000, 'x'), err));
    BOOST_TEST(err.find("longer than") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(formats_replies)
{
    BOOST_TEST(pmi::format("barrier_out") == "cmd=barrier_out\n");
    BOOST_TEST(pmi::format("get_result", {{"rc", "0"}, {"value", "x"}}) == "cmd=get_result rc=0 value=x\n");
}

BOOST_AUTO_TEST_SUITE_END()
