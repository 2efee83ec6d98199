// SPDX-License-Identifier: BSD-3-Clause
// A trunk's TCP settings reach the kernel: on a real connected TCP socket
// over loopback, the pacing limit, the congestion control and the timeout
// read back as set, and the rate split is the link's payload share.
#include "relay/relay/relay.hpp"
#include "relay/relay/trunk_tuning.hpp"
#include "transport/tcp_congestion_control.hpp"
#include "transport/tcp_telemetry.hpp"

#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <string>

using namespace hashi;

namespace {

// A connected pair over loopback: {client, server side}; -1s if the
// machine has no loopback to listen on.
std::pair<UniqueFd, UniqueFd> tcp_pair()
{
    UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a {};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (!listener || ::bind(listener.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(listener.get(), 1) != 0 || ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&a), &len) != 0) {
        return {};
    }
    UniqueFd client(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!client || ::connect(client.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        return {};
    }
    UniqueFd server(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    return {std::move(client), std::move(server)};
}

std::string congestion_control(int fd)
{
    char name[16] = {};
    socklen_t len = sizeof name - 1;
    ::getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &len);
    return name;
}

} // namespace

BOOST_AUTO_TEST_SUITE(relay_trunk_tuning)

BOOST_AUTO_TEST_CASE(the_rate_is_the_links_payload_share_split_over_the_trunks)
{
    const std::uint64_t link = 100'000'000 / 8; // 100 Mbit/s
    BOOST_TEST(relay::trunk_pacing_rate(link, 1) == 11'500'000u);
    BOOST_TEST(relay::trunk_pacing_rate(link, 2) == 5'750'000u);
    BOOST_TEST(relay::trunk_pacing_rate(link, 0) == 11'500'000u); // none sending: as one
    BOOST_TEST(relay::trunk_pacing_rate(0, 3) == 0u); // no rate given: unpaced
    BOOST_TEST(relay::trunk_pacing_rate(1, 8) == 1u); // never 0, which would mean unpaced
}

BOOST_AUTO_TEST_CASE(the_unsent_bound_is_10_ms_of_the_trunks_rate)
{
    BOOST_TEST(relay::trunk_notsent_lowat(0) == 256 << 10); // no rate known yet
    BOOST_TEST(relay::trunk_notsent_lowat(1'000'000) == 16 << 10); // 8 Mbit/s: 10 KB, the floor
    BOOST_TEST(relay::trunk_notsent_lowat(2'500'000) == 25'000); // 20 Mbit/s
    BOOST_TEST(relay::trunk_notsent_lowat(125'000'000) == 1'250'000); // 1 Gbit/s
    BOOST_TEST(relay::trunk_notsent_lowat(2'000'000'000) == 4 << 20); // 16 Gbit/s: the ceiling
}

BOOST_AUTO_TEST_CASE(pacing_and_tuning_reach_the_socket)
{
    auto [client, server] = tcp_pair();
    BOOST_REQUIRE_MESSAGE(client && server, "no TCP over loopback here");
    relay::relay_config cfg;
    cfg.tcp_cc = "reno"; // built into every Linux kernel
    cfg.trunk_timeout = std::chrono::seconds(7);
    BOOST_TEST(relay::tune_trunk_socket(client.get(), cfg).empty());
    BOOST_TEST(congestion_control(client.get()) == "reno");
    unsigned timeout_ms = 0;
    socklen_t len = sizeof timeout_ms;
    BOOST_REQUIRE(::getsockopt(client.get(), IPPROTO_TCP, TCP_USER_TIMEOUT, &timeout_ms, &len) == 0);
    BOOST_TEST(timeout_ms == 7000u);

    BOOST_REQUIRE(relay::pace_trunk_socket(client.get(), 5'750'000));
    auto t = fi::read_tcp_telemetry(client.get());
    BOOST_REQUIRE(t.has_value());
    BOOST_TEST(t->max_pacing_rate == 5'750'000u);
    BOOST_REQUIRE(relay::set_trunk_notsent_lowat(client.get(), relay::trunk_notsent_lowat(5'750'000)));
    int lowat = 0;
    len = sizeof lowat;
    BOOST_REQUIRE(::getsockopt(client.get(), IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat, &len) == 0);
    BOOST_TEST(lowat == 57'500); // 10 ms of 5.75 MB/s

    // 0 lifts the limit again.
    BOOST_REQUIRE(relay::pace_trunk_socket(client.get(), 0));
    t = fi::read_tcp_telemetry(client.get());
    BOOST_REQUIRE(t.has_value());
    BOOST_TEST(t->max_pacing_rate == 0u);
}

BOOST_AUTO_TEST_CASE(a_congestion_control_the_kernel_does_not_offer_is_named_with_the_ones_it_does)
{
    const auto problem = fi::congestion_control_problem("no_such_cc", "--tcp-cc no_such_cc");
    BOOST_TEST(problem.find("--tcp-cc no_such_cc: the kernel offers no such TCP congestion control") == 0u);
    BOOST_TEST(problem.find("reno") != std::string::npos);
    BOOST_TEST(fi::congestion_control_problem("reno", "--tcp-cc reno").empty());
}

BOOST_AUTO_TEST_SUITE_END()
