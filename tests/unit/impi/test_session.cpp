// SPDX-License-Identifier: BSD-3-Clause
// impi-server's engine and mpiexec's client talking over real loopback
// sockets, each side in its own thread: the startup with Hashi's
// challenge-response, the global view both clients compute, a global PMI
// barrier, FINI, and the refusals of a wrong secret and of a weak method
// the server did not enable.
#include "mpi/mpiexec/impi_client.hpp"
#include "relay/impi/server.hpp"

#include <poll.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <future>
#include <thread>

using namespace hashi::impi;
using namespace hashi::mpiexec;

namespace {

const std::string secret = "session-test-secret-0123456789";

class ServerThread {
public:
    explicit ServerThread(ServerConfig cfg) : server_(std::move(cfg))
    {
        BOOST_REQUIRE(::pipe(stop_) == 0);
        addr_ = server_.listen();
        thread_ = std::thread([this] { result_ = server_.run(stop_[0]); });
    }
    ~ServerThread()
    {
        (void)!::write(stop_[1], "x", 1);
        thread_.join();
        ::close(stop_[0]);
        ::close(stop_[1]);
    }
    int finish()
    {
        thread_.join();
        thread_ = std::thread([] {});
        return result_;
    }
    [[nodiscard]] const std::string& addr() const { return addr_; }

private:
    Server server_;
    std::string addr_;
    int stop_[2] = {-1, -1};
    int result_ = -1;
    std::thread thread_;
};

ServerConfig config(std::uint32_t nclients, Credentials creds)
{
    ServerConfig c;
    c.nclients = nclients;
    c.host = "127.0.0.1";
    c.startup_timeout = std::chrono::seconds(10);
    c.credentials = std::move(creds);
    return c;
}

ImpiSettings settings(int client, const std::string& addr, Credentials creds)
{
    ImpiSettings s;
    s.client = client;
    s.server = addr;
    s.credentials = std::move(creds);
    s.timeout = std::chrono::seconds(10);
    return s;
}

LocalClient local(int nhosts, std::vector<int> host_of_proc)
{
    LocalClient l;
    l.host_addr.resize(static_cast<std::size_t>(nhosts));
    l.host_of_proc = std::move(host_of_proc);
    return l;
}

Credentials with_secret(const std::string& s)
{
    Credentials c;
    c.secret = s;
    return c;
}

// Waits for the next events from the server (at most 10 s).
std::vector<ImpiClient::Event> next_events(ImpiClient& c)
{
    for (int i = 0; i < 100; ++i) {
        pollfd p {c.fd(), POLLIN, 0};
        if (::poll(&p, 1, 100) > 0) {
            auto e = c.on_readable();
            if (!e.empty()) {
                return e;
            }
        }
    }
    return {};
}

std::string join_error(ImpiClient& c, const LocalClient& l)
{
    try {
        c.join(l, -1);
    } catch (const ImpiError& e) {
        return e.what();
    }
    return "joined";
}

} // namespace

BOOST_AUTO_TEST_SUITE(impi_session)

BOOST_AUTO_TEST_CASE(two_clusters_start_barrier_and_finish)
{
    ServerThread server(config(2, with_secret(secret)));
    ImpiClient c0(settings(0, server.addr(), with_secret(secret)));
    ImpiClient c1(settings(1, server.addr(), with_secret(secret)));
    // Client 1 joins first: ranks still follow client ranks.
    auto f1 = std::async(std::launch::async, [&] { return c1.join(local(1, {0, 0}), -1); });
    auto j0 = c0.join(local(2, {0, 1, 0}), -1);
    auto j1 = f1.get();

    BOOST_TEST(j0.nclients == 2);
    BOOST_TEST(j0.global_size == 5);
    BOOST_TEST(j1.global_size == 5);
    BOOST_TEST(j0.rank_offset == 0);
    BOOST_TEST(j1.rank_offset == 3);
    BOOST_TEST(j0.job_id != 0u);
    BOOST_TEST(j0.job_id == j1.job_id);
    // Node ids are global: cluster 1's only host is node 2.
    BOOST_TEST((j0.node_of_rank == std::vector<int> {0, 1, 0, 2, 2}));
    BOOST_TEST((j1.node_of_rank == j0.node_of_rank));

    std::string error;
    BOOST_REQUIRE(c1.send_barrier({{"P3-bc", "b3"}, {"P4-bc", "b4"}}, error));
    BOOST_REQUIRE(c0.send_barrier({{"P0-bc", "a0"}}, error));
    for (auto* c : {&c0, &c1}) {
        auto e = next_events(*c);
        BOOST_REQUIRE(e.size() == 1u);
        BOOST_TEST((e[0].kind == ImpiClient::Event::Kind::barrier_out));
        // Client order: client 0's entries first.
        BOOST_TEST((e[0].entries == std::vector<KeyValue> {{"P0-bc", "a0"}, {"P3-bc", "b3"}, {"P4-bc", "b4"}}));
    }
    c0.send_fini();
    c1.send_fini();
    BOOST_TEST(server.finish() == 0);
}

BOOST_AUTO_TEST_CASE(abort_reaches_the_other_cluster)
{
    ServerThread server(config(2, with_secret(secret)));
    ImpiClient c0(settings(0, server.addr(), with_secret(secret)));
    ImpiClient c1(settings(1, server.addr(), with_secret(secret)));
    auto f1 = std::async(std::launch::async, [&] { return c1.join(local(1, {0}), -1); });
    c0.join(local(1, {0}), -1);
    f1.get();
    c1.send_abort(7, "rank 1 exited with status 7");
    auto e = next_events(c0);
    BOOST_REQUIRE(e.size() == 1u);
    BOOST_TEST((e[0].kind == ImpiClient::Event::Kind::aborted));
    BOOST_TEST(e[0].code == 7);
    BOOST_TEST(e[0].message == "cluster 1 failed: rank 1 exited with status 7");
    BOOST_TEST(server.finish() == 1);
}

BOOST_AUTO_TEST_CASE(wrong_secret_is_refused)
{
    ServerThread server(config(1, with_secret(secret)));
    ImpiClient c(settings(0, server.addr(), with_secret("another-secret-0123456789")));
    auto e = join_error(c, local(1, {0}));
    BOOST_TEST(
        e.find("says: authentication failed: the client does not hold the job's secret") != std::string::npos, e);
}

BOOST_AUTO_TEST_CASE(weak_methods_need_the_server_too)
{
    ServerThread server(config(1, with_secret(secret)));
    Credentials none;
    none.allow_none = true;
    ImpiClient c(settings(0, server.addr(), none));
    auto e = join_error(c, local(1, {0}));
    BOOST_TEST(e.find("no common authentication method") != std::string::npos, e);
}

BOOST_AUTO_TEST_CASE(key_method_when_both_enable_it)
{
    Credentials key;
    key.key = 99;
    ServerThread server(config(1, key));
    ImpiClient good(settings(0, server.addr(), key));
    auto j = good.join(local(1, {0, 0}), -1);
    BOOST_TEST(j.global_size == 2);
    good.send_fini();
    BOOST_TEST(server.finish() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
