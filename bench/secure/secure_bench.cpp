// SPDX-License-Identifier: BSD-3-Clause
// hashi-secure-bench: what each protection of src/transport/secure costs
// over TCP loopback, every variant in the same run, as ratios to plain.
//   hashi-secure-bench [--quick] [--repeat N]
// Bandwidth: one thread writes S bytes per writev (1 KiB, 64 KiB, 1 MiB,
// 16 MiB) and another reads, both through their stream, as the path would
// (non-blocking sockets, poll for readiness). Latency: ping-pong of 8 B and
// 4 KiB, half the median round trip. Handshake: connected TCP socket to
// both streams ready (the TLS handshake; key derivation for all), median.
// CPU: MB per CPU second with both ends in one thread (the least noisy
// figure on a shared machine).
// Each figure is the best of --repeat runs (the machine is shared).
// Lines "result <variant> <metric> <value>" are for bench/secure/run-secure.
#include "transport/secure/open_stream.hpp"
#include "tests/transport/loopback_pair.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace hashi;
using clock_type = std::chrono::steady_clock;

namespace {

struct variant {
    std::string name;
    secure::protection level;
    secure::stream_options opt;
};

std::vector<variant> variants()
{
    std::vector<variant> v;
    v.push_back({"plain", secure::protection::none, {}});
    secure::stream_options o;
    o.integrity_mac = secure::mac_kind::gmac;
    v.push_back({"integrity-gmac", secure::protection::integrity, o});
    o.integrity_mac = secure::mac_kind::hmac_sha256;
    v.push_back({"integrity-hmac", secure::protection::integrity, o});
    o = {};
    o.tls.ciphersuite = "TLS_AES_128_GCM_SHA256";
    o.tls.forward_secrecy = true;
    v.push_back({"tls-aes128-dhe", secure::protection::encryption, o});
    o.tls.forward_secrecy = false;
    v.push_back({"tls-aes128-nodhe", secure::protection::encryption, o});
    o.tls.ciphersuite = "TLS_CHACHA20_POLY1305_SHA256";
    o.tls.forward_secrecy = true;
    v.push_back({"tls-chacha20-dhe", secure::protection::encryption, o});
    // What a kTLS-capable kernel runs (OpenSSL's socket BIO, SIGPIPE guard),
    // with the crypto still in user space here: the cost of that path alone.
    o = {};
    o.tls.openssl_socket_bio = true;
    v.push_back({"tls-aes128-sockbio", secure::protection::encryption, o});
    return v;
}

using fds = testing::loopback_pair;

std::unique_ptr<fds> tcp_pair()
{
    return testing::make_loopback_pair();
}

const secure::secret job_key = [] {
    secure::secret k {};
    for (std::size_t i = 0; i < k.size(); ++i)
        k[i] = static_cast<std::uint8_t>(i * 7 + 3);
    return k;
}();

void wait_for(int fd, short events)
{
    pollfd p {fd, events, 0};
    ::poll(&p, 1, 100);
}

struct connection {
    std::unique_ptr<fds> sock;
    std::unique_ptr<secure::byte_stream> c, a;
};

std::unique_ptr<secure::byte_stream> open_side(const variant& v, int fd, secure::stream_role role, std::uint8_t nonce)
{
    fi::handshake_transcript t;
    t.connector_nonce.fill(nonce);
    std::string err;
    auto s = secure::open_stream(fd, v.level, role, job_key, secure::transcript_binding(t), err, v.opt);
    if (!s)
        throw std::runtime_error(err);
    return s;
}

// A connection with both handshakes done, both driven from this thread
// (no thread start in the figure); `us` gets the time from the connected
// socket to both streams ready, key derivation included.
connection connect(const variant& v, std::uint8_t nonce, double* us = nullptr)
{
    connection k;
    k.sock = tcp_pair();
    const auto t0 = clock_type::now();
    k.c = open_side(v, k.sock->a, secure::stream_role::connector, nonce);
    k.a = open_side(v, k.sock->b, secure::stream_role::acceptor, nonce);
    auto hc = secure::handshake_status::want_write, ha = secure::handshake_status::want_read;
    while (hc != secure::handshake_status::done || ha != secure::handshake_status::done) {
        const auto before_c = hc, before_a = ha;
        if (hc != secure::handshake_status::done)
            hc = k.c->handshake();
        if (ha != secure::handshake_status::done)
            ha = k.a->handshake();
        if (hc == secure::handshake_status::failed || ha == secure::handshake_status::failed)
            throw std::runtime_error("handshake failed: " + k.c->error() + " / " + k.a->error());
        if (hc == before_c && ha == before_a) {
            pollfd p[2] = {{k.sock->a, POLLIN, 0}, {k.sock->b, POLLIN, 0}};
            ::poll(p, 2, 1);
        }
    }
    if (us != nullptr)
        *us = std::chrono::duration<double, std::micro>(clock_type::now() - t0).count();
    return k;
}

double thread_cpu_seconds()
{
    timespec t {};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// MB moved per CPU second when one thread runs both ends (writes of
// `write_size`, reads until EAGAIN): the crypto and system-call cost of both
// sides together, in this thread's CPU time, so other users of the machine
// barely change it.
double cpu_throughput(const variant& v, std::size_t write_size, std::size_t total)
{
    auto k = connect(v, 3);
    std::vector<std::uint8_t> src(write_size, 0xa5), dst(1 << 20);
    std::size_t sent = 0, got = 0, off = 0;
    const double t0 = thread_cpu_seconds();
    while (got < total) {
        if (sent < total) {
            const iovec iov {src.data() + off, write_size - off};
            const ssize_t w = k.c->writev(&iov, 1);
            if (w > 0) {
                sent += static_cast<std::size_t>(w);
                off = (off + static_cast<std::size_t>(w)) % write_size;
            }
        } else if (k.c->output_pending())
            k.c->flush();
        for (;;) {
            const ssize_t r = k.a->read(dst.data(), dst.size());
            if (r <= 0)
                break;
            got += static_cast<std::size_t>(r);
        }
    }
    return static_cast<double>(total) / (thread_cpu_seconds() - t0) / 1e6;
}

// Writes all of [p, p + n) through the stream, waiting on poll as needed.
void write_all(secure::byte_stream& s, int fd, const std::uint8_t* p, std::size_t n)
{
    while (n > 0) {
        const iovec iov {const_cast<std::uint8_t*>(p), n};
        const ssize_t w = s.writev(&iov, 1);
        if (w > 0) {
            p += w;
            n -= static_cast<std::size_t>(w);
        } else if (w < 0 && errno == EAGAIN)
            wait_for(fd, POLLOUT);
        else
            throw std::runtime_error("writev: " + std::string(std::strerror(errno)) + " " + s.error());
        if (n == 0)
            while (s.output_pending() && s.flush() < 0) {
                if (errno != EAGAIN)
                    throw std::runtime_error("flush: " + std::string(std::strerror(errno)));
                wait_for(fd, POLLOUT);
            }
    }
}

// Reads exactly n bytes (into a buffer of `buf_len`, reused).
void read_exactly(secure::byte_stream& s, int fd, std::uint8_t* buf, std::size_t buf_len, std::size_t n)
{
    while (n > 0) {
        const ssize_t r = s.read(buf, std::min(buf_len, n));
        if (r > 0)
            n -= static_cast<std::size_t>(r);
        else if (r < 0 && errno == EAGAIN) {
            if (!s.buffered_input())
                wait_for(fd, POLLIN);
        } else
            throw std::runtime_error("read: " + std::string(r == 0 ? "end of stream" : std::strerror(errno)) + " " +
                s.error());
    }
}

double bandwidth(const variant& v, std::size_t write_size, std::size_t total)
{
    auto k = connect(v, 1);
    std::vector<std::uint8_t> src(write_size, 0x5a);
    std::vector<std::uint8_t> dst(1 << 20);
    const auto t0 = clock_type::now();
    std::thread reader([&] { read_exactly(*k.a, k.sock->b, dst.data(), dst.size(), total); });
    for (std::size_t sent = 0; sent < total; sent += write_size)
        write_all(*k.c, k.sock->a, src.data(), std::min(write_size, total - sent));
    reader.join();
    const double s = std::chrono::duration<double>(clock_type::now() - t0).count();
    return static_cast<double>(total) / s / 1e6; // MB/s
}

double latency(const variant& v, std::size_t size, int iterations)
{
    auto k = connect(v, 2);
    std::vector<std::uint8_t> msg(size, 1), buf(size);
    std::thread echo([&] {
        for (int i = 0; i < iterations; ++i) {
            read_exactly(*k.a, k.sock->b, buf.data(), buf.size(), size);
            write_all(*k.a, k.sock->b, msg.data(), size);
        }
    });
    std::vector<double> rtt;
    std::vector<std::uint8_t> mine(size);
    for (int i = 0; i < iterations; ++i) {
        const auto t0 = clock_type::now();
        write_all(*k.c, k.sock->a, msg.data(), size);
        read_exactly(*k.c, k.sock->a, mine.data(), mine.size(), size);
        rtt.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - t0).count());
    }
    echo.join();
    std::nth_element(rtt.begin(), rtt.begin() + rtt.size() / 2, rtt.end());
    return rtt[rtt.size() / 2] / 2;
}

double handshake(const variant& v, int count)
{
    std::vector<double> t;
    for (int i = 0; i < count; ++i) {
        double us = 0;
        connect(v, static_cast<std::uint8_t>(i), &us);
        t.push_back(us);
    }
    std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
    return t[t.size() / 2];
}

std::string cpu_line()
{
    std::ifstream in("/proc/cpuinfo");
    std::string line, model, flags;
    while (std::getline(in, line)) {
        if (model.empty() && line.rfind("model name", 0) == 0)
            model = line.substr(line.find(':') + 2);
        if (flags.empty() && line.rfind("flags", 0) == 0)
            flags = line;
    }
    std::string have;
    for (const char* f : {"aes", "pclmulqdq", "vaes", "vpclmulqdq", "sha_ni", "avx2", "avx512f"})
        if ((flags + " ").find(std::string(" ") + f + " ") != std::string::npos)
            have += std::string(" ") + f;
    return model + " (" + std::to_string(std::thread::hardware_concurrency()) + " cpus; flags:" + have + ")";
}

} // namespace

int main(int argc, char** argv)
{
    bool quick = false;
    int repeat = 3;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--quick")
            quick = true;
        else if (a == "--repeat" && i + 1 < argc)
            repeat = std::max(1, std::atoi(argv[++i]));
        else {
            std::fprintf(stderr, "usage: hashi-secure-bench [--quick] [--repeat N]\n");
            return 2;
        }
    }
    if (quick)
        repeat = 1;
    std::printf("# cpu %s\n", cpu_line().c_str());
    const std::vector<std::pair<std::string, std::size_t>> sizes = {
        {"1KiB", 1024}, {"64KiB", 65536}, {"1MiB", 1 << 20}, {"16MiB", 16 << 20}};
    const std::size_t total = quick ? (32u << 20) : (256u << 20);
    const int iters = quick ? 500 : 5000;
    std::map<std::string, std::map<std::string, double>> res;
    std::vector<std::string> metrics;
    try {
        for (const auto& v : variants()) {
            auto k = connect(v, 9);
            std::printf("# %-18s %s\n", v.name.c_str(), k.c->describe().c_str());
            std::fflush(stdout);
        }
        for (int r = 0; r < repeat; ++r) {
            // Variants interleaved within each repetition, so that a burst of
            // load from other users of the machine hits them all alike.
            for (const auto& v : variants()) {
                auto& m = res[v.name];
                for (const auto& [label, s] : sizes) {
                    const double bw = bandwidth(v, s, std::max(total / (s < 65536 ? 4 : 1), s));
                    m["bw_" + label] = std::max(m["bw_" + label], bw);
                }
                for (const std::size_t s : {std::size_t {8}, std::size_t {4096}}) {
                    const std::string key = "lat_" + std::to_string(s) + "B";
                    const double l = latency(v, s, iters);
                    m[key] = m.count(key) ? std::min(m[key], l) : l;
                }
                for (const auto& [label, s] : std::vector<std::pair<std::string, std::size_t>> {{"1KiB", 1024}, {"64KiB", 65536}}) {
                    const double c = cpu_throughput(v, s, total / 4);
                    m["cpu_" + label] = std::max(m["cpu_" + label], c);
                }
                const double h = handshake(v, quick ? 20 : 100);
                m["handshake"] = m.count("handshake") ? std::min(m["handshake"], h) : h;
            }
            std::fprintf(stderr, "hashi-secure-bench: repetition %d of %d done\n", r + 1, repeat);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "hashi-secure-bench: %s\n", e.what());
        return 1;
    }
    const auto& base = res["plain"];
    std::printf("%-18s", "variant");
    for (const auto& [k, _] : base)
        std::printf(" %20s", k.c_str());
    std::printf("\n");
    for (const auto& v : variants()) {
        std::printf("%-18s", v.name.c_str());
        for (const auto& [k, val] : res[v.name]) {
            char cell[64];
            std::snprintf(cell, sizeof cell, "%.1f (%.2f)", val, base.at(k) > 0 ? val / base.at(k) : 0.0);
            std::printf(" %20s", cell);
        }
        std::printf("\n");
    }
    std::printf("# bw_* in MB/s (ratio to plain), cpu_* in MB per CPU second for both ends, lat_* in us one way,\n"
                "# handshake in us from connected socket to both streams ready; (ratio to plain)\n");
    for (const auto& v : variants())
        for (const auto& [k, val] : res[v.name])
            std::printf("result %s %s %.3f\n", v.name.c_str(), k.c_str(), val);
    return 0;
}
