// SPDX-License-Identifier: BSD-3-Clause
#include "mpi/mpiexec/pmi_server.hpp"

#include <boost/test/unit_test.hpp>

using namespace hashi::mpiexec;

namespace {

PmiServer make_server(int size)
{
    PmiJobInfo info;
    info.size = size;
    info.universe_size = size;
    info.kvsname = "kvs_test";
    info.process_mapping = "(vector,(0,2,1))";
    info.appnum.assign(size, 0);
    if (size > 1) {
        info.appnum[1] = 1;
    }
    return PmiServer(info);
}

std::string only_reply(const PmiServer::Result& r, int rank)
{
    BOOST_REQUIRE_EQUAL(r.replies.size(), 1U);
    BOOST_TEST(r.replies[0].rank == rank);
    BOOST_TEST(r.error.empty());
    return r.replies[0].line;
}

} // namespace

BOOST_AUTO_TEST_SUITE(pmi_server)

BOOST_AUTO_TEST_CASE(init_sequence_as_mpich_runs_it)
{
    auto s = make_server(2);
    BOOST_TEST(only_reply(s.handle(0, "cmd=init pmi_version=1 pmi_subversion=1\n"), 0) ==
        "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
    BOOST_TEST(s.initialized(0));
    BOOST_TEST(!s.initialized(1));
    BOOST_TEST(
        only_reply(s.handle(0, "cmd=get_maxes\n"), 0) == "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n");
    BOOST_TEST(only_reply(s.handle(1, "cmd=get_appnum\n"), 1) == "cmd=appnum appnum=1\n");
    BOOST_TEST(only_reply(s.handle(0, "cmd=get_my_kvsname\n"), 0) == "cmd=my_kvsname kvsname=kvs_test\n");
    BOOST_TEST(only_reply(s.handle(0, "cmd=get_universe_size\n"), 0) == "cmd=universe_size size=2\n");
    BOOST_TEST(only_reply(s.handle(1, "cmd=get kvsname=kvs_test key=PMI_process_mapping\n"), 1) ==
        "cmd=get_result rc=0 msg=success value=(vector,(0,2,1))\n");
}

BOOST_AUTO_TEST_CASE(wrong_pmi_version_is_refused)
{
    auto s = make_server(1);
    BOOST_TEST(
        only_reply(s.handle(0, "cmd=init pmi_version=2 pmi_subversion=0\n"), 0).find("rc=-1") != std::string::npos);
    BOOST_TEST(!s.initialized(0));
}

BOOST_AUTO_TEST_CASE(put_barrier_get)
{
    auto s = make_server(3);
    BOOST_TEST(only_reply(s.handle(2, "cmd=put kvsname=kvs_test key=card-2 value=tcp://x:1\n"), 2) ==
        "cmd=put_result rc=0 msg=success\n");
    BOOST_TEST(s.handle(0, "cmd=barrier_in\n").replies.empty());
    BOOST_TEST(s.handle(2, "cmd=barrier_in\n").replies.empty());
    BOOST_TEST(s.barrier_waiting() == 2);
    auto r = s.handle(1, "cmd=barrier_in\n");
    BOOST_REQUIRE_EQUAL(r.replies.size(), 3U);
    for (int i = 0; i < 3; ++i) {
        BOOST_TEST(r.replies[i].rank == i);
        BOOST_TEST(r.replies[i].line == "cmd=barrier_out\n");
    }
    BOOST_TEST(s.barrier_waiting() == 0);
    BOOST_TEST(only_reply(s.handle(0, "cmd=get kvsname=kvs_test key=card-2\n"), 0) ==
        "cmd=get_result rc=0 msg=success value=tcp://x:1\n");
    BOOST_TEST(only_reply(s.handle(0, "cmd=get kvsname=kvs_test key=nope\n"), 0) ==
        "cmd=get_result rc=-1 msg=key_nope_not_found\n");
    BOOST_TEST(only_reply(s.handle(0, "cmd=get kvsname=other key=card-2\n"), 0).find("rc=-1") != std::string::npos);
    BOOST_TEST(only_reply(s.handle(0, "cmd=put kvsname=kvs_test key=k\n"), 0).find("rc=-1") != std::string::npos);
    BOOST_TEST(only_reply(s.handle(0, "cmd=put kvsname=kvs_test key=" + std::string(65, 'k') + " value=v\n"), 0)
                   .find("rc=-1") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(barrier_is_reusable)
{
    auto s = make_server(2);
    for (int round = 0; round < 3; ++round) {
        BOOST_TEST(s.handle(1, "cmd=barrier_in\n").replies.empty());
        BOOST_TEST(s.handle(0, "cmd=barrier_in\n").replies.size() == 2U);
    }
}

BOOST_AUTO_TEST_CASE(abort_and_finalize)
{
    auto s = make_server(2);
    auto r = s.handle(1, "cmd=abort exitcode=3\n");
    BOOST_TEST(r.replies.empty());
    BOOST_REQUIRE(r.abort_code);
    BOOST_TEST(*r.abort_code == 3);
    BOOST_TEST(only_reply(s.handle(0, "cmd=finalize\n"), 0) == "cmd=finalize_ack\n");
    BOOST_TEST(s.finalized(0));
    BOOST_TEST(*s.handle(0, "cmd=abort exitcode=junk\n").abort_code == 1);
}

BOOST_AUTO_TEST_CASE(name_service)
{
    auto s = make_server(2);
    BOOST_TEST(only_reply(s.handle(0, "cmd=publish_name service=svc port=p1\n"), 0) ==
        "cmd=publish_result rc=0 msg=success\n");
    BOOST_TEST(only_reply(s.handle(1, "cmd=publish_name service=svc port=p2\n"), 1).find("rc=-1") != std::string::npos);
    BOOST_TEST(
        only_reply(s.handle(1, "cmd=lookup_name service=svc\n"), 1) == "cmd=lookup_result rc=0 msg=success port=p1\n");
    BOOST_TEST(only_reply(s.handle(0, "cmd=unpublish_name service=svc\n"), 0).find("rc=0") != std::string::npos);
    BOOST_TEST(only_reply(s.handle(1, "cmd=lookup_name service=svc\n"), 1).find("rc=-1") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(spawn_block_is_declined_after_endcmd)
{
    auto s = make_server(1);
    BOOST_TEST(s.handle(0, "mcmd=spawn\n").replies.empty());
    BOOST_TEST(s.handle(0, "nprocs=2\n").replies.empty());
    BOOST_TEST(s.handle(0, "execname=./a.out\n").replies.empty());
    auto r = only_reply(s.handle(0, "endcmd\n"), 0);
    BOOST_TEST(r.starts_with("cmd=spawn_result rc=-1"));
    // Back to normal commands afterwards.
    BOOST_TEST(only_reply(s.handle(0, "cmd=get_appnum\n"), 0) == "cmd=appnum appnum=0\n");
}

BOOST_AUTO_TEST_CASE(protocol_errors_do_not_crash)
{
    auto s = make_server(2);
    BOOST_TEST(!s.handle(0, "garbage\n").error.empty());
    BOOST_TEST(!s.handle(0, "cmd=frobnicate\n").error.empty());
    BOOST_TEST(!s.handle(5, "cmd=init pmi_version=1\n").error.empty());
    BOOST_TEST(!s.handle(-1, "cmd=init pmi_version=1\n").error.empty());
}

BOOST_AUTO_TEST_SUITE_END()
