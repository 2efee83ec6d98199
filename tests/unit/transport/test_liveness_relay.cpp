// SPDX-License-Identifier: BSD-3-Clause
// The liveness thread with a peer reached through a relay, over real UDP
// sockets: its ping goes to the relay in the relay's envelope
// (wire/relay_route.hpp), naming the peer's card address, and the peer's
// pong, arriving from the relay's address rather than the peer's, counts.
#include "transport/engine/liveness.hpp"
#include "transport/wire/heartbeat.hpp"
#include "transport/wire/relay_route.hpp"

#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

using namespace hashi;

namespace {

// A UDP socket on 127.0.0.1 and a free port.
int udp_socket(std::uint16_t& port)
{
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    BOOST_REQUIRE(fd >= 0);
    sockaddr_in sin {};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sin;
    BOOST_REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin) == 0);
    BOOST_REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&sin), &len) == 0);
    port = ntohs(sin.sin_port);
    return fd;
}

} // namespace

BOOST_AUTO_TEST_CASE(pings_to_a_relayed_peer_go_through_its_relay_and_its_pong_counts)
{
    wire::job_key key {};
    key.fill(0x5a);
    const std::uint64_t self_nonce = 0x1111, peer_nonce = 0x2222;
    std::uint16_t monitor_port = 0, relay_port = 0;
    const int monitor_fd = udp_socket(monitor_port);
    const int relay_fd = udp_socket(relay_port);

    fi::liveness_settings s;
    s.timing.heartbeat = std::chrono::milliseconds(300);
    s.timing.timeout = std::chrono::milliseconds(60000);
    fi::liveness_monitor monitor(s, key, self_nonce, monitor_fd);
    fi::liveness_monitor::watched_peer w;
    w.key[0] = 'H'; // any key: only compared
    w.ipv4 = 0x0aff0001u; // the card's private address: never sent to from here
    w.port = 40002;
    w.cluster = 1;
    w.relay_ipv4 = INADDR_LOOPBACK;
    w.relay_port = relay_port;
    w.nonce = peer_nonce;
    w.name = "peer 1 (10.255.0.1:40002 (cluster 1)) via relay 127.0.0.1";
    monitor.publish({w});

    // The relay receives the ping in its envelope.
    pollfd pf {relay_fd, POLLIN, 0};
    BOOST_REQUIRE_MESSAGE(::poll(&pf, 1, 5000) == 1, "no ping reached the relay within 5 s");
    std::uint8_t buf[256];
    sockaddr_in from {};
    socklen_t flen = sizeof from;
    const ssize_t n = ::recvfrom(relay_fd, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &flen);
    BOOST_REQUIRE(n == static_cast<ssize_t>(wire::relay_liveness_size));
    auto env = wire::decode_relay_liveness(buf, static_cast<std::size_t>(n));
    BOOST_REQUIRE(std::holds_alternative<wire::relay_liveness>(env));
    const auto& l = std::get<wire::relay_liveness>(env);
    BOOST_TEST(l.to_ipv4 == w.ipv4);
    BOOST_TEST(l.to_port == w.port);
    BOOST_TEST(l.to_cluster == w.cluster); // the relay's trunk when there is no stream yet
    BOOST_TEST(wire::verify_heartbeat(l.heartbeat.data(), key));
    auto ping = wire::decode_heartbeat(l.heartbeat.data(), l.heartbeat.size());
    BOOST_REQUIRE(std::holds_alternative<wire::heartbeat>(ping));
    const auto& p = std::get<wire::heartbeat>(ping);
    BOOST_TEST((p.kind == wire::heartbeat_kind::ping));
    BOOST_TEST(p.sender == self_nonce);
    BOOST_TEST(p.target == peer_nonce);
    BOOST_TEST(ntohs(from.sin_port) == monitor_port); // from the liveness socket itself

    // The peer's pong, forwarded by the relay: plain, from the relay's port.
    wire::heartbeat pong;
    pong.kind = wire::heartbeat_kind::pong;
    pong.sender = peer_nonce;
    pong.target = self_nonce;
    pong.challenge = p.challenge;
    const auto bytes = wire::encode_heartbeat(pong, key);
    BOOST_REQUIRE(::sendto(relay_fd, bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr*>(&from), flen) ==
        static_cast<ssize_t>(bytes.size()));
    std::uint64_t received = 0;
    for (int i = 0; i < 50 && received == 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        received = monitor.stats().pongs_received;
    }
    BOOST_TEST(received == 1u);
    BOOST_TEST(monitor.stats().stale_pongs == 0u);
    ::close(relay_fd);
}
