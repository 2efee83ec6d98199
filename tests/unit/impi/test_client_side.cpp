// SPDX-License-Identifier: BSD-3-Clause
// mpiexec's side of a federated job that needs no sockets: the -client and
// -impi-* options, and the PMI server's global barrier (new entries out,
// other clusters' entries in).
#include "mpi/mpiexec/options.hpp"
#include "mpi/mpiexec/pmi_server.hpp"

#include <boost/test/unit_test.hpp>
#include <map>

using namespace hashi::mpiexec;

namespace {

// One parse: the options, or the usage error it raised.
struct Parsed {
    std::optional<Options> options;
    std::string error;
};

Parsed parse(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {})
{
    auto lookup = [&env](const std::string& k) {
        auto it = env.find(k);
        return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
    Parsed p;
    try {
        p.options = parse_options(args, lookup, "hashi");
    } catch (const UsageError& e) {
        p.error = e.what();
    }
    return p;
}

bool fails_with(
    const std::vector<std::string>& args, const std::string& what, const std::map<std::string, std::string>& env = {})
{
    auto p = parse(args, env);
    BOOST_TEST_MESSAGE("error: " << p.error);
    return !p.options && p.error.find(what) != std::string::npos;
}

} // namespace

BOOST_AUTO_TEST_SUITE(client_options)

BOOST_AUTO_TEST_CASE(client_and_credentials)
{
    auto o =
        *parse({"-client", "1", "10.0.0.1:4000", "-impi-secret-file", "/s", "-impi-timeout", "7", "-n", "2", "./a"})
             .options;
    BOOST_TEST(o.federation.active());
    BOOST_TEST(o.federation.client == 1);
    BOOST_TEST(o.federation.server == "10.0.0.1:4000");
    BOOST_TEST(*o.federation.secret_file == "/s");
    BOOST_TEST(o.federation.timeout_seconds == 7);
    BOOST_TEST(o.apps.at(0).argv.at(0) == "./a");
    BOOST_TEST(!parse({"-n", "1", "./a"}).options->federation.active());
    auto e = *parse({"-client", "0", "h:1", "./a"}, {{"HASHI_IMPI_TIMEOUT", "9"}}).options;
    BOOST_TEST(e.federation.timeout_seconds == 9);
    auto weak = *parse({"-client", "0", "h:1", "-impi-auth-key", "-impi-key", "5", "-impi-auth-none", "./a"}).options;
    BOOST_TEST(weak.federation.enable_key);
    BOOST_TEST(weak.federation.enable_none);
    BOOST_TEST(*weak.federation.key == "5");
}

BOOST_AUTO_TEST_CASE(client_errors)
{
    BOOST_TEST(fails_with({"-client", "32", "h:1", "./a"}, "is not a whole number from 0 to 31"));
    BOOST_TEST(fails_with({"-client", "0", "nohostport", "./a"}, "is not addr:port"));
    BOOST_TEST(fails_with({"-client", "0"}, "needs a value"));
    BOOST_TEST(fails_with({"-client", "0", "h:1", "-client", "1", "h:1", "./a"}, "given twice"));
    BOOST_TEST(fails_with({"-impi-secret-file", "/s", "./a"}, "add -client K addr:port"));
    BOOST_TEST(fails_with({"-client", "0", "h:1", "./a"}, "HASHI_IMPI_TIMEOUT", {{"HASHI_IMPI_TIMEOUT", "x"}}));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(global_barrier)

BOOST_AUTO_TEST_CASE(barrier_waits_for_the_other_clusters)
{
    PmiJobInfo info;
    info.size = 2;
    info.global_barrier = true;
    info.kvsname = "kvs";
    PmiServer s(info);
    BOOST_TEST(s.handle(0, "cmd=put kvsname=kvs key=P0-bc value=card0\n").replies.size() == 1u);
    s.handle(1, "cmd=put kvsname=kvs key=P1-bc value=card1\n");
    s.handle(1, "cmd=put kvsname=kvs key=P1-bc value=card1b\n"); // a key put twice travels once, last value
    auto r0 = s.handle(0, "cmd=barrier_in\n");
    BOOST_TEST(r0.replies.empty());
    BOOST_TEST(!r0.barrier_complete);
    auto r1 = s.handle(1, "cmd=barrier_in\n");
    BOOST_TEST(r1.replies.empty()); // no barrier_out before the other clusters
    BOOST_TEST(r1.barrier_complete);

    auto fresh = s.take_new_entries();
    BOOST_REQUIRE(fresh.size() == 2u);
    BOOST_TEST(fresh[0].first == "P0-bc");
    BOOST_TEST(fresh[1].second == "card1b");
    BOOST_TEST(s.take_new_entries().empty());

    auto out = s.release_barrier({{"P2-bc", "remote"}, {"P0-bc", "card0"}});
    BOOST_TEST(out.size() == 2u);
    BOOST_TEST(out[0].line == "cmd=barrier_out\n");
    auto got = s.handle(0, "cmd=get kvsname=kvs key=P2-bc\n");
    BOOST_TEST(got.replies.at(0).line == "cmd=get_result rc=0 msg=success value=remote\n");
    BOOST_TEST(s.barrier_waiting() == 0);
}

BOOST_AUTO_TEST_CASE(single_cluster_barrier_is_unchanged)
{
    PmiJobInfo info;
    info.size = 1;
    PmiServer s(info);
    auto r = s.handle(0, "cmd=barrier_in\n");
    BOOST_TEST(!r.barrier_complete);
    BOOST_TEST(r.replies.at(0).line == "cmd=barrier_out\n");
}

BOOST_AUTO_TEST_SUITE_END()
