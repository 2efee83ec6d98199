// SPDX-License-Identifier: BSD-3-Clause
// impi-server's engine and mpiexec's client talking over real loopback
// sockets, each side in its own thread: the startup with Hashi's
// challenge-response, the global view both clients compute, a global PMI
// barrier, FINI, the refusals of a wrong secret and of a weak method the
// server did not enable; a client among a crowd of idle strangers, and one
// whose connection is closed before it joined (it connects again).
#include "mpi/mpiexec/impi_client.hpp"
#include "relay/server/server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <future>
#include <iostream>
#include <sstream>
#include <thread>

using namespace hashi::impi;
using namespace hashi::mpiexec;
using hashi::UniqueFd;

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

// A listening socket on 127.0.0.1 at any port.
UniqueFd loopback_listener(std::uint16_t& port)
{
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a {};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    BOOST_REQUIRE(::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    BOOST_REQUIRE(::listen(fd.get(), 16) == 0);
    ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
    return fd;
}

// A TCP connection to `port` on 127.0.0.1 from the loopback address
// `from` (any of 127/8), as a stranger on another host would open it.
UniqueFd connect_from(const char* from, std::uint16_t port)
{
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in src {};
    src.sin_family = AF_INET;
    ::inet_pton(AF_INET, from, &src.sin_addr);
    BOOST_REQUIRE(::bind(fd.get(), reinterpret_cast<sockaddr*>(&src), sizeof src) == 0);
    sockaddr_in dst {};
    dst.sin_family = AF_INET;
    dst.sin_port = htons(port);
    dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    BOOST_REQUIRE(::connect(fd.get(), reinterpret_cast<sockaddr*>(&dst), sizeof dst) == 0);
    return fd;
}

// Stands in front of the server: closes the first connection without a
// word, as impi-server does to one its admission policy evicts, then
// either forwards the next one to the server or (`then_stop`) stops
// listening, as a server that exited.
class ClosingProxy {
public:
    ClosingProxy(std::uint16_t server_port, bool then_stop) : server_port_(server_port), then_stop_(then_stop)
    {
        listener_ = loopback_listener(port_);
        thread_ = std::thread([this] { run(); });
    }
    ~ClosingProxy() { thread_.join(); }
    [[nodiscard]] std::string addr() const { return "127.0.0.1:" + std::to_string(port_); }

private:
    void run()
    {
        UniqueFd first(::accept(listener_.get(), nullptr, nullptr));
        first.reset(); // without a word
        if (then_stop_) {
            listener_.reset();
            return;
        }
        UniqueFd client(::accept(listener_.get(), nullptr, nullptr));
        UniqueFd server = connect_from("127.0.0.1", server_port_);
        // Both ways until either side closes.
        for (;;) {
            pollfd p[2] = {{client.get(), POLLIN, 0}, {server.get(), POLLIN, 0}};
            if (::poll(p, 2, 20000) <= 0) {
                return;
            }
            for (int i = 0; i < 2; ++i) {
                if (p[i].revents != 0) {
                    char buf[4096];
                    ssize_t n = ::read(p[i].fd, buf, sizeof buf);
                    if (n <= 0 || ::write(p[1 - i].fd, buf, static_cast<std::size_t>(n)) != n) {
                        return;
                    }
                }
            }
        }
    }

    std::uint16_t server_port_;
    bool then_stop_;
    std::uint16_t port_ = 0;
    UniqueFd listener_;
    std::thread thread_;
};

std::uint16_t port_of(const std::string& addr)
{
    return static_cast<std::uint16_t>(std::stoi(addr.substr(addr.rfind(':') + 1)));
}

// What the code under test writes to std::cerr while this lives.
class CerrCapture {
public:
    CerrCapture() : old_(std::cerr.rdbuf(text_.rdbuf())) { }
    ~CerrCapture() { std::cerr.rdbuf(old_); }
    [[nodiscard]] std::string text() const { return text_.str(); }

private:
    std::ostringstream text_;
    std::streambuf* old_;
};

std::size_t count_of(const std::string& text, const std::string& what)
{
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
        ++n;
    }
    return n;
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

BOOST_AUTO_TEST_SUITE(impi_session_floods)

BOOST_AUTO_TEST_CASE(a_client_joins_past_a_crowd_of_idle_strangers)
{
    auto cfg = config(1, with_secret(secret));
    cfg.admission = {.deadline = std::chrono::seconds(30), .per_source = 2, .total = 4};
    ServerThread server(cfg);
    // 40 idle connections from 20 addresses, 2 each: ten times the pool,
    // none of them ever sends a byte, none times out during the test.
    std::vector<UniqueFd> idle;
    for (int i = 0; i < 40; ++i) {
        auto from = "127.0.1." + std::to_string(2 + i / 2);
        idle.push_back(connect_from(from.c_str(), port_of(server.addr())));
    }
    ImpiClient c(settings(0, server.addr(), with_secret(secret)));
    auto j = c.join(local(1, {0}), -1);
    BOOST_TEST(j.global_size == 1);
    c.send_fini();
    BOOST_TEST(server.finish() == 0);
}

BOOST_AUTO_TEST_CASE(a_connection_closed_before_joining_is_made_again_and_said_once)
{
    ServerThread server(config(1, with_secret(secret)));
    ClosingProxy proxy(port_of(server.addr()), false);
    ImpiClient c(settings(0, proxy.addr(), with_secret(secret)));
    CerrCapture err;
    auto j = c.join(local(1, {0}), -1);
    BOOST_TEST(j.global_size == 1);
    BOOST_TEST(count_of(err.text(), "connecting again until the -impi-timeout") == 1u, err.text());
    c.send_fini();
    BOOST_TEST(server.finish() == 0);
}

BOOST_AUTO_TEST_CASE(a_server_that_closed_and_then_refuses_is_not_waited_for)
{
    ClosingProxy proxy(0, true);
    ImpiClient c(settings(0, proxy.addr(), with_secret(secret))); // a 10 s timeout
    CerrCapture err;
    auto start = Clock::now();
    auto e = join_error(c, local(1, {0}));
    BOOST_TEST(e.find("during the startup (AUTH)") != std::string::npos, e);
    BOOST_TEST(e.find("connecting again was refused: impi-server is no longer running") != std::string::npos, e);
    // Generous: it gives up on the refusal, not at the timeout.
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    BOOST_TEST(took < 8000);
}

BOOST_AUTO_TEST_SUITE_END()
