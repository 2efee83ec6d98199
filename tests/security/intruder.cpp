// SPDX-License-Identifier: BSD-3-Clause
// hashi-intruder: a stranger on the network attacking a running job's ranks,
// as tests/security/injection.sh uses it. For every port given it tries:
//
//   1. the attack that worked against the unauthenticated handshake
//      (version 1): a hello with a made-up job id, reading the job id and
//      the endpoint's own address out of the refusal, then a second hello
//      with them, accepted, and a tagged message (tag 7) injected as a
//      made-up peer and as every other rank whose address it learned;
//   2. today's handshake (version 2) with a guessed key: hello, then a
//      forged proof and an injected message;
//   3. junk bytes and a connection that says nothing.
//
// `hashi-intruder --hold N SECONDS IPV4 PORT` instead opens N connections to
// one port, says nothing on them and holds them for SECONDS (a descriptor
// flood), then prints how many it opened and how many the rank closed.
//
// It prints one line per fact it learned or message it believes it
// injected, and "port P: N bytes received" per port; the test reads them.
// The v1 layout is written out here on purpose: it is the old protocol the
// provider no longer speaks, kept as the attacker knew it.
#include "common/number_text.hpp"
#include "transport/address.hpp"
#include "transport/wire/frame.hpp"
#include "transport/wire/handshake.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace {

using bytes = std::vector<std::uint8_t>;
constexpr std::size_t v1_hello_size = 152;
std::size_t total_received = 0;

int dial(std::uint32_t ip, std::uint16_t port)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in sin {};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(ip);
    sin.sin_port = htons(port);
    timeval tv {5, 0}; // connect gives up after this (SO_SNDTIMEO)
    if (fd >= 0)
        ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin) != 0) {
        if (fd >= 0)
            ::close(fd);
        return -1;
    }
    return fd;
}

void send_all(int fd, const bytes& b)
{
    std::size_t at = 0;
    while (at < b.size()) {
        const ssize_t n = ::send(fd, b.data() + at, b.size() - at, MSG_NOSIGNAL);
        if (n <= 0)
            return;
        at += static_cast<std::size_t>(n);
    }
}

// Whatever the endpoint sends within `ms`, up to `max` bytes.
bytes receive(int fd, std::size_t max, int ms = 1500)
{
    bytes got;
    while (got.size() < max) {
        pollfd p {fd, POLLIN, 0};
        if (::poll(&p, 1, ms) <= 0)
            break;
        std::uint8_t buf[4096];
        const ssize_t n = ::recv(fd, buf, std::min(sizeof buf, max - got.size()), 0);
        if (n <= 0)
            break;
        got.insert(got.end(), buf, buf + n);
    }
    total_received += got.size();
    return got;
}

bytes header(std::uint8_t type, std::uint64_t length, std::uint32_t seq = 0, std::uint64_t tag = 0)
{
    hashi::wire::frame_header h;
    h.type = static_cast<hashi::wire::frame_type>(type);
    h.length = length;
    h.seq = seq;
    h.tag = tag;
    const auto e = hashi::wire::encode_header(h);
    return bytes(e.begin(), e.end());
}

void put_le(std::uint8_t* p, std::uint64_t v, int n)
{
    for (int i = 0; i < n; ++i)
        p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

std::uint64_t get_le(const std::uint8_t* p, int n)
{
    std::uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i)
        v = v << 8 | p[i];
    return v;
}

bytes v1_hello(std::uint64_t job, const hashi::fi::endpoint_address::bytes& from,
    const hashi::fi::endpoint_address::bytes& to)
{
    bytes b = header(1, v1_hello_size);
    bytes body(v1_hello_size, 0);
    std::memcpy(body.data(), "HASHIWP\x01", 8);
    put_le(&body[8], job, 8);
    std::memcpy(&body[16], from.data(), 32);
    std::memcpy(&body[48], to.data(), 32);
    put_le(&body[80], 4242, 4);
    std::memcpy(&body[88], "intruder", 8);
    b.insert(b.end(), body.begin(), body.end());
    return b;
}

bytes injected_message(const char* text)
{
    bytes b = header(4, std::strlen(text) + 1, 1, 7);
    b.insert(b.end(), text, text + std::strlen(text) + 1);
    return b;
}

hashi::fi::endpoint_address made_up(std::uint32_t ip, std::mt19937_64& rng)
{
    hashi::fi::endpoint_address a;
    a.ipv4 = ip;
    a.port = static_cast<std::uint16_t>(1024 + rng() % 30000);
    a.nonce = rng();
    return a;
}

void attack_v1(std::uint32_t ip, std::uint16_t port, std::mt19937_64& rng)
{
    const auto guess = made_up(ip, rng);
    int fd = dial(ip, port);
    if (fd < 0)
        return;
    send_all(fd, v1_hello(0, made_up(ip, rng).encode(), guess.encode()));
    const bytes ack = receive(fd, 56 + v1_hello_size);
    ::close(fd);
    if (ack.size() < 56 + v1_hello_size)
        return;
    const std::uint64_t job = get_le(&ack[56 + 8], 8);
    hashi::fi::endpoint_address::bytes self {};
    std::memcpy(self.data(), &ack[56 + 16], 32);
    std::printf("LEAK port %u: job id %016llx and the endpoint's address\n", port, static_cast<unsigned long long>(job));
    // With what the refusal told, a second hello passes as a made-up peer.
    fd = dial(ip, port);
    if (fd < 0)
        return;
    send_all(fd, v1_hello(job, made_up(ip, rng).encode(), self));
    const bytes ok = receive(fd, 56 + v1_hello_size);
    if (ok.size() == 56 + v1_hello_size && get_le(&ok[56 + 84], 4) == 0) {
        send_all(fd, injected_message("INJECTED-BY-STRANGER"));
        std::printf("INJECTED port %u as a made-up peer\n", port);
        receive(fd, 65536, 500);
    }
    ::close(fd);
}

void attack_v2(std::uint32_t ip, std::uint16_t port, std::mt19937_64& rng)
{
    // The endpoint's address (with its random nonce) is not known to a
    // stranger now that refusals say nothing; it guesses.
    const auto guess = made_up(ip, rng);
    int fd = dial(ip, port);
    if (fd < 0)
        return;
    hashi::wire::hello h {made_up(ip, rng).encode(), guess.encode(), {}};
    const auto body = hashi::wire::encode(h);
    bytes b = header(1, body.size());
    b.insert(b.end(), body.begin(), body.end());
    send_all(fd, b);
    const bytes answer = receive(fd, 4096);
    if (!answer.empty())
        std::printf("ANSWERED port %u: %zu bytes to a hello with a guessed address\n", port, answer.size());
    hashi::wire::proof pr;
    for (auto& x : pr.connector_mac)
        x = static_cast<std::uint8_t>(rng());
    pr.who = {4242, "intruder"};
    const auto pb = hashi::wire::encode(pr);
    b = header(14, pb.size());
    b.insert(b.end(), pb.begin(), pb.end());
    send_all(fd, b);
    send_all(fd, injected_message("INJECTED-BY-STRANGER"));
    receive(fd, 4096, 500);
    ::close(fd);
}

void junk(std::uint32_t ip, std::uint16_t port, std::mt19937_64& rng)
{
    int fd = dial(ip, port);
    if (fd >= 0) {
        bytes b(1000);
        for (auto& x : b)
            x = static_cast<std::uint8_t>(rng());
        send_all(fd, b);
        receive(fd, 4096, 300);
        ::close(fd);
    }
    fd = dial(ip, port); // says nothing, hangs up
    if (fd >= 0) {
        receive(fd, 4096, 300);
        ::close(fd);
    }
}

// A command-line number; nullopt after saying what was wrong with it.
std::optional<std::uint64_t> argument(const char* what, const char* text, std::uint64_t lo, std::uint64_t hi)
{
    std::string error;
    const auto v = hashi::parse_whole(what, text, {.lo = lo, .hi = hi}, error);
    if (!v)
        std::fprintf(stderr, "hashi-intruder: %s\n", error.c_str());
    return v;
}

} // namespace

int hold(int argc, char** argv)
{
    if (argc != 6) {
        std::fprintf(stderr, "usage: hashi-intruder --hold N SECONDS IPV4 PORT\n");
        return 2;
    }
    const auto n = argument("--hold N", argv[2], 1, 1'000'000);
    const auto seconds = n ? argument("--hold SECONDS", argv[3], 1, 3600) : std::nullopt;
    const auto port = seconds ? argument("PORT", argv[5], 1, 65535) : std::nullopt;
    in_addr in {};
    if (!port || ::inet_pton(AF_INET, argv[4], &in) != 1) {
        std::fprintf(stderr, "hashi-intruder: bad --hold arguments\n");
        return 2;
    }
    std::vector<pollfd> fds;
    for (std::uint64_t i = 0; i < *n; ++i) {
        const int fd = dial(ntohl(in.s_addr), static_cast<std::uint16_t>(*port));
        if (fd < 0) {
            std::perror("hashi-intruder: connect");
            break;
        }
        fds.push_back({fd, POLLIN, 0});
    }
    std::printf("holding %zu connections\n", fds.size());
    std::fflush(stdout);
    ::sleep(static_cast<unsigned>(*seconds));
    std::size_t closed = 0;
    ::poll(fds.data(), fds.size(), 0);
    for (auto& p : fds) {
        if (p.revents & (POLLIN | POLLHUP | POLLERR))
            ++closed;
        ::close(p.fd);
    }
    std::printf("opened %zu connections, %zu closed by the rank\n", fds.size(), closed);
    return 0;
}

int main(int argc, char** argv)
{
    if (argc > 1 && std::strcmp(argv[1], "--hold") == 0)
        return hold(argc, argv);
    if (argc < 3) {
        std::fprintf(stderr, "usage: hashi-intruder IPV4 PORT...\n");
        return 2;
    }
    in_addr in {};
    if (::inet_pton(AF_INET, argv[1], &in) != 1) {
        std::fprintf(stderr, "hashi-intruder: '%s' is not an IPv4 address\n", argv[1]);
        return 2;
    }
    const std::uint32_t ip = ntohl(in.s_addr);
    std::mt19937_64 rng(std::random_device {}());
    for (int i = 2; i < argc; ++i) {
        const auto p = argument("PORT", argv[i], 1, 65535);
        if (!p)
            return 2;
        const auto port = static_cast<std::uint16_t>(*p);
        const std::size_t before = total_received;
        attack_v1(ip, port, rng);
        attack_v2(ip, port, rng);
        junk(ip, port, rng);
        std::printf("port %u: %zu bytes received\n", port, total_received - before);
    }
    return 0;
}
