// SPDX-License-Identifier: BSD-3-Clause
// The protected byte streams (src/transport/secure): the setting, the key
// derivation, and each stream over real TCP loopback sockets: both
// directions, large and tiny writes, partial reads, EAGAIN and buffered
// output; and for the protected ones, every way a man in the middle could
// change the bytes (flip, cut, replay, reorder, another key) ends in EBADMSG
// or a failed handshake rather than in wrong data.
#include "transport/secure/integrity_stream.hpp"
#include "transport/secure/key_schedule.hpp"
#include "transport/secure/open_stream.hpp"
#include "transport/secure/plain_stream.hpp"
#include "transport/secure/protection.hpp"
#include "transport/secure/tls_stream.hpp"
#include "tests/transport/loopback_pair.hpp"

#include <boost/test/unit_test.hpp>

#include <openssl/evp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

using namespace hashi;
using secure::byte_stream;
using secure::handshake_status;

namespace {

using fd_pair = testing::loopback_pair;

std::unique_ptr<fd_pair> tcp_pair(int buffer_bytes = 0)
{
    return testing::make_loopback_pair(buffer_bytes);
}

secure::secret key_of(std::uint8_t seed)
{
    secure::secret k {};
    for (std::size_t i = 0; i < k.size(); ++i)
        k[i] = static_cast<std::uint8_t>(seed * 31 + i);
    return k;
}

const secure::secret job_key = key_of(1);

fi::handshake_transcript transcript(std::uint8_t nonce_seed)
{
    fi::handshake_transcript t;
    t.job_id = 0x1122334455667788ULL;
    t.connector[0] = 0xc0;
    t.acceptor[0] = 0xac;
    t.connector_nonce.fill(nonce_seed);
    t.acceptor_nonce.fill(static_cast<std::uint8_t>(nonce_seed + 1));
    return t;
}

// The variants every stream test runs over.
struct variant {
    const char* name;
    secure::protection level;
    secure::stream_options opt;
};

std::vector<variant> variants()
{
    secure::stream_options hmac;
    hmac.integrity_mac = secure::mac_kind::hmac_sha256;
    secure::stream_options no_dhe;
    no_dhe.tls.forward_secrecy = false;
    secure::stream_options chacha;
    chacha.tls.ciphersuite = "TLS_CHACHA20_POLY1305_SHA256";
    secure::stream_options socket_bio; // the kTLS code path, crypto in user space
    socket_bio.tls.openssl_socket_bio = true;
    return {{"none", secure::protection::none, {}}, {"integrity gmac", secure::protection::integrity, {}},
        {"integrity hmac", secure::protection::integrity, hmac}, {"tls dhe", secure::protection::encryption, {}},
        {"tls no dhe", secure::protection::encryption, no_dhe}, {"tls chacha", secure::protection::encryption, chacha},
        {"tls openssl socket bio", secure::protection::encryption, socket_bio}};
}

using clock_type = std::chrono::steady_clock;

void wait_a_bit(int fd_a, int fd_b)
{
    pollfd p[2] = {{fd_a, POLLIN | POLLOUT, 0}, {fd_b, POLLIN | POLLOUT, 0}};
    ::poll(p, 2, 1);
}

// Drives both handshakes until both are done; false if one failed.
bool handshake_both(byte_stream& c, byte_stream& a, int fa, int fb)
{
    const auto deadline = clock_type::now() + std::chrono::seconds(5);
    handshake_status sc = handshake_status::want_write, sa = handshake_status::want_read;
    while (clock_type::now() < deadline) {
        if (sc != handshake_status::done)
            sc = c.handshake();
        if (sa != handshake_status::done)
            sa = a.handshake();
        if (sc == handshake_status::failed || sa == handshake_status::failed)
            return false;
        if (sc == handshake_status::done && sa == handshake_status::done)
            return true;
        wait_a_bit(fa, fb);
    }
    return false;
}

struct stream_pair {
    std::unique_ptr<fd_pair> fds;
    std::unique_ptr<byte_stream> c, a;
};

stream_pair open_pair(const variant& v, int sndbuf = 0, const secure::secret& key_c = job_key,
    const secure::secret& key_a = job_key)
{
    stream_pair p;
    p.fds = tcp_pair(sndbuf);
    const auto binding = secure::transcript_binding(transcript(7));
    std::string err;
    p.c = secure::open_stream(p.fds->a, v.level, secure::stream_role::connector, key_c, binding, err, v.opt);
    p.a = secure::open_stream(p.fds->b, v.level, secure::stream_role::acceptor, key_a, binding, err, v.opt);
    BOOST_REQUIRE_MESSAGE(p.c && p.a, v.name << ": " << err);
    return p;
}

std::vector<std::uint8_t> random_bytes(std::size_t n, unsigned seed)
{
    std::mt19937 g(seed);
    std::vector<std::uint8_t> v(n);
    for (auto& b : v)
        b = static_cast<std::uint8_t>(g());
    return v;
}

// Sends `data` from w to r, `chunk` bytes per writev split into `pieces`
// iovecs, reading `read_len` bytes at a time; returns what r read.
std::vector<std::uint8_t> transfer(byte_stream& w, byte_stream& r, int fw, int fr, const std::vector<std::uint8_t>& data,
    std::size_t chunk, int pieces, std::size_t read_len)
{
    std::vector<std::uint8_t> got;
    std::vector<std::uint8_t> buf(read_len);
    std::size_t sent = 0;
    const auto deadline = clock_type::now() + std::chrono::seconds(20);
    while (got.size() < data.size() && clock_type::now() < deadline) {
        bool moved = false;
        if (sent < data.size()) {
            const std::size_t n = std::min(chunk, data.size() - sent);
            std::vector<iovec> iov;
            const std::size_t piece = std::max<std::size_t>(1, n / static_cast<std::size_t>(pieces));
            for (std::size_t off = 0; off < n; off += piece)
                iov.push_back({const_cast<std::uint8_t*>(data.data() + sent + off), std::min(piece, n - off)});
            const ssize_t k = w.writev(iov.data(), static_cast<int>(iov.size()));
            if (k > 0) {
                sent += static_cast<std::size_t>(k);
                moved = true;
            } else
                BOOST_REQUIRE_MESSAGE(k < 0 && errno == EAGAIN, "writev: " << k << " " << std::strerror(errno));
        } else if (w.output_pending()) {
            const int f = w.flush();
            BOOST_REQUIRE(f == 0 || errno == EAGAIN);
        }
        for (;;) {
            const ssize_t k = r.read(buf.data(), buf.size());
            if (k > 0) {
                BOOST_REQUIRE(static_cast<std::size_t>(k) <= read_len);
                got.insert(got.end(), buf.begin(), buf.begin() + k);
                moved = true;
                continue;
            }
            BOOST_REQUIRE_MESSAGE(k < 0 && errno == EAGAIN, "read: " << k << " " << std::strerror(errno) << " " << r.error());
            BOOST_REQUIRE(!r.buffered_input()); // EAGAIN with input buffered would stall the path
            break;
        }
        if (!moved)
            wait_a_bit(fw, fr);
    }
    return got;
}

} // namespace

BOOST_AUTO_TEST_SUITE(secure_streams)

BOOST_AUTO_TEST_CASE(protection_setting_parses_and_names_the_variable)
{
    std::string err;
    BOOST_CHECK(secure::parse_protection("none", err) == secure::protection::none);
    BOOST_CHECK(secure::parse_protection("integrity", err) == secure::protection::integrity);
    BOOST_CHECK(secure::parse_protection("encryption", err) == secure::protection::encryption);
    BOOST_CHECK(err.empty());
    for (const char* bad : {"", "Integrity", "tls", "encryption ", "on"}) {
        err.clear();
        BOOST_CHECK(!secure::parse_protection(bad, err));
        BOOST_CHECK_MESSAGE(err.find("FI_HASHI_WAN_PROTECTION") != std::string::npos, err);
        BOOST_CHECK_MESSAGE(err.find("none, integrity, encryption") != std::string::npos, err);
        BOOST_CHECK_MESSAGE(err.find(std::string("'") + bad + "'") != std::string::npos, err);
    }
    ::setenv("FI_HASHI_WAN_PROTECTION", "encryption", 1);
    BOOST_CHECK(secure::protection_from_environment(secure::protection::none, err) == secure::protection::encryption);
    ::setenv("FI_HASHI_WAN_PROTECTION", "bogus", 1);
    err.clear();
    BOOST_CHECK(!secure::protection_from_environment(secure::protection::none, err));
    BOOST_CHECK(!err.empty());
    ::unsetenv("FI_HASHI_WAN_PROTECTION");
    BOOST_CHECK(secure::protection_from_environment(secure::protection::integrity, err) == secure::protection::integrity);
}

BOOST_AUTO_TEST_CASE(derivation_is_hkdf_sha256_equal_on_both_sides_and_fresh_per_connection)
{
    const auto b7 = secure::transcript_binding(transcript(7));
    const auto s = secure::derive_secret(job_key, b7, secure::tls_psk_label);
    // The other side builds its own transcript from the same handshake.
    BOOST_CHECK(s == secure::derive_secret(job_key, secure::transcript_binding(transcript(7)), secure::tls_psk_label));
    BOOST_CHECK(s != secure::derive_secret(job_key, secure::transcript_binding(transcript(8)), secure::tls_psk_label));
    auto t = transcript(7);
    t.acceptor_nonce[15] ^= 1;
    BOOST_CHECK(s != secure::derive_secret(job_key, secure::transcript_binding(t), secure::tls_psk_label));
    t = transcript(7);
    t.status = wire::hello_status::duplicate;
    BOOST_CHECK(s != secure::derive_secret(job_key, secure::transcript_binding(t), secure::tls_psk_label));
    BOOST_CHECK(s != secure::derive_secret(key_of(2), b7, secure::tls_psk_label));
    BOOST_CHECK(s != secure::derive_secret(job_key, b7, secure::connector_to_acceptor_label));
    BOOST_CHECK(secure::derive_secret(job_key, b7, secure::connector_to_acceptor_label) !=
        secure::derive_secret(job_key, b7, secure::acceptor_to_connector_label));

    // HKDF by hand (RFC 5869, one output block): PRK = HMAC(salt, key),
    // OKM = HMAC(PRK, info || 1).
    const std::string salt = "hashi connection secret v1";
    std::uint8_t prk[32];
    std::size_t n = 0;
    BOOST_REQUIRE(EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA256", nullptr, salt.data(), salt.size(), job_key.data(),
                      job_key.size(), prk, sizeof prk, &n) != nullptr);
    const auto label = secure::tls_psk_label;
    std::vector<std::uint8_t> info(label.size() + 1 + b7.size() + 1, 0);
    std::memcpy(info.data(), label.data(), label.size());
    std::memcpy(info.data() + label.size() + 1, b7.data(), b7.size());
    info.back() = 1;
    secure::secret okm {};
    BOOST_REQUIRE(EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA256", nullptr, prk, sizeof prk, info.data(), info.size(),
                      okm.data(), okm.size(), &n) != nullptr);
    BOOST_CHECK(s == okm);
    BOOST_CHECK_EQUAL(b7.size(), 8u + 32 + 32 + 16 + 16 + 4);
}

BOOST_AUTO_TEST_CASE(hmac_tag_is_truncated_hmac_sha256_of_counter_header_payload)
{
    const secure::secret k = key_of(3);
    secure::record_mac mac(secure::mac_kind::hmac_sha256, k);
    const std::uint8_t header[4] = {5, 0, 0, 0};
    const std::uint8_t payload[5] = {'h', 'e', 'l', 'l', 'o'};
    std::uint8_t tag[16];
    BOOST_REQUIRE(mac.tag(2, header, 4, payload, 5, tag));
    std::uint8_t again[16];
    BOOST_REQUIRE(mac.tag(2, header, 4, payload, 5, again)); // the context restarts cleanly
    BOOST_CHECK(std::memcmp(tag, again, 16) == 0);
    const std::uint8_t msg[] = {2, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 'h', 'e', 'l', 'l', 'o'};
    std::uint8_t full[32];
    std::size_t n = 0;
    BOOST_REQUIRE(EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA256", nullptr, k.data(), k.size(), msg, sizeof msg, full,
                      sizeof full, &n) != nullptr);
    BOOST_CHECK(std::memcmp(tag, full, 16) == 0);
    secure::record_mac gmac(secure::mac_kind::gmac, k);
    BOOST_REQUIRE(gmac.tag(2, header, 4, payload, 5, again));
    BOOST_CHECK(std::memcmp(tag, again, 16) != 0);
    std::uint8_t other[16];
    BOOST_REQUIRE(gmac.tag(3, header, 4, payload, 5, other)); // another counter, another tag
    BOOST_CHECK(std::memcmp(other, again, 16) != 0);
}

BOOST_AUTO_TEST_CASE(every_stream_carries_large_and_tiny_writes_both_ways)
{
    for (const auto& v : variants()) {
        BOOST_TEST_CONTEXT(v.name)
        {
            auto p = open_pair(v);
            BOOST_REQUIRE(handshake_both(*p.c, *p.a, p.fds->a, p.fds->b));
            const auto big = random_bytes(3 << 20, 1);
            BOOST_CHECK(transfer(*p.c, *p.a, p.fds->a, p.fds->b, big, 1 << 20, 3, 65536) == big);
            BOOST_CHECK(transfer(*p.a, *p.c, p.fds->b, p.fds->a, big, 40000, 1, 100000) == big);
            // Tiny writes of many small iovecs (frame headers), read 7 bytes at a time.
            const auto small = random_bytes(5000, 2);
            BOOST_CHECK(transfer(*p.c, *p.a, p.fds->a, p.fds->b, small, 57, 19, 7) == small);
            BOOST_CHECK(transfer(*p.a, *p.c, p.fds->b, p.fds->a, small, 1, 1, 1) == small);
            BOOST_CHECK(p.c->error().empty() && p.a->error().empty());
            BOOST_CHECK(!p.c->describe().empty());
            const auto sc = p.c->counters();
            BOOST_CHECK_EQUAL(sc.bytes_sent, big.size() + small.size());
            BOOST_CHECK_EQUAL(sc.bytes_received, big.size() + small.size());
            if (v.level != secure::protection::none)
                BOOST_CHECK(sc.records_sent > 0);
        }
    }
}

BOOST_AUTO_TEST_CASE(eagain_when_idle_and_when_the_peer_does_not_read)
{
    for (const auto& v : variants()) {
        BOOST_TEST_CONTEXT(v.name)
        {
            auto p = open_pair(v, 16384);
            BOOST_REQUIRE(handshake_both(*p.c, *p.a, p.fds->a, p.fds->b));
            std::uint8_t buf[64];
            errno = 0;
            BOOST_CHECK_EQUAL(p.a->read(buf, sizeof buf), -1);
            BOOST_CHECK_EQUAL(errno, EAGAIN);
            BOOST_CHECK(!p.a->buffered_input());
            BOOST_CHECK_EQUAL(p.c->writev(nullptr, 0), 0);
            // Fill everything until the stream says EAGAIN: small writes
            // (gathered) and large ones (a record straight from the caller's
            // memory, which must be copied when OpenSSL wants it again).
            for (const std::size_t block_size : {std::size_t {8192}, std::size_t {40000}}) {
            auto block = random_bytes(block_size, 3);
            std::vector<std::uint8_t> sent;
            const iovec iov {block.data(), block.size()};
            int eagain = 0;
            for (int i = 0; i < 10000 && eagain == 0; ++i) {
                const ssize_t k = p.c->writev(&iov, 1);
                if (k < 0) {
                    BOOST_REQUIRE_EQUAL(errno, EAGAIN);
                    ++eagain;
                } else {
                    sent.insert(sent.end(), block.begin(), block.begin() + k);
                    // Taken means taken: the caller may reuse its memory at once.
                    std::rotate(block.begin(), block.begin() + 1, block.end());
                }
            }
            BOOST_REQUIRE_EQUAL(eagain, 1);
            if (v.level != secure::protection::none)
                BOOST_CHECK(p.c->output_pending()); // what was taken and sealed waits in the stream
            // The reader drains; flush completes; every byte taken arrives.
            std::vector<std::uint8_t> got;
            std::vector<std::uint8_t> rbuf(4096);
            const auto deadline = clock_type::now() + std::chrono::seconds(10);
            while ((got.size() < sent.size() || p.c->output_pending()) && clock_type::now() < deadline) {
                if (p.c->output_pending()) {
                    const int f = p.c->flush();
                    BOOST_REQUIRE(f == 0 || errno == EAGAIN);
                }
                const ssize_t k = p.a->read(rbuf.data(), rbuf.size());
                if (k > 0)
                    got.insert(got.end(), rbuf.begin(), rbuf.begin() + k);
                else {
                    BOOST_REQUIRE(k < 0 && errno == EAGAIN);
                    wait_a_bit(p.fds->a, p.fds->b);
                }
            }
            BOOST_CHECK(!p.c->output_pending());
            BOOST_CHECK(got == sent);
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(buffered_input_says_when_to_read_without_epoll)
{
    for (const auto& v : variants()) {
        if (v.level == secure::protection::none)
            continue;
        BOOST_TEST_CONTEXT(v.name)
        {
            auto p = open_pair(v);
            BOOST_REQUIRE(handshake_both(*p.c, *p.a, p.fds->a, p.fds->b));
            const auto data = random_bytes(3000, 4);
            // Three records in three writes.
            for (int i = 0; i < 3; ++i) {
                const iovec iov {const_cast<std::uint8_t*>(data.data() + 1000 * i), 1000};
                BOOST_REQUIRE_EQUAL(p.c->writev(&iov, 1), 1000);
            }
            BOOST_REQUIRE_EQUAL(p.c->flush(), 0);
            ::usleep(20000);
            std::uint8_t b[10];
            BOOST_REQUIRE_EQUAL(p.a->read(b, sizeof b), 10);
            BOOST_CHECK(std::memcmp(b, data.data(), 10) == 0);
            // The socket is drained (the stream read ahead): only buffered_input tells.
            pollfd pf {p.fds->b, POLLIN, 0};
            BOOST_CHECK_EQUAL(::poll(&pf, 1, 0), 0);
            BOOST_CHECK(p.a->buffered_input());
            std::vector<std::uint8_t> got(b, b + 10);
            while (p.a->buffered_input()) {
                const ssize_t k = p.a->read(b, sizeof b);
                if (k < 0)
                    break;
                got.insert(got.end(), b, b + k);
            }
            BOOST_CHECK(got == data);
            BOOST_CHECK_EQUAL(p.a->read(b, sizeof b), -1);
            BOOST_CHECK_EQUAL(errno, EAGAIN);
        }
    }
}

BOOST_AUTO_TEST_CASE(wrong_key_fails)
{
    for (const auto& v : variants()) {
        if (v.level == secure::protection::none)
            continue;
        BOOST_TEST_CONTEXT(v.name)
        {
            auto p = open_pair(v, 0, job_key, key_of(9));
            const bool hs = handshake_both(*p.c, *p.a, p.fds->a, p.fds->b);
            if (v.level == secure::protection::encryption) {
                BOOST_CHECK(!hs); // the PSK binder does not verify
                BOOST_CHECK_MESSAGE(!p.c->error().empty() || !p.a->error().empty(), "no message");
                BOOST_TEST_MESSAGE("wrong key: connector: " << p.c->error() << "; acceptor: " << p.a->error());
                continue;
            }
            BOOST_REQUIRE(hs);
            const std::uint8_t msg[] = "hello";
            const iovec iov {const_cast<std::uint8_t*>(msg), sizeof msg};
            BOOST_REQUIRE_EQUAL(p.c->writev(&iov, 1), static_cast<ssize_t>(sizeof msg));
            ::usleep(20000);
            std::uint8_t b[16];
            BOOST_CHECK_EQUAL(p.a->read(b, sizeof b), -1);
            BOOST_CHECK_EQUAL(errno, EBADMSG);
            BOOST_CHECK_MESSAGE(p.a->error().find("verification") != std::string::npos, p.a->error());
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()

namespace {

using record = std::vector<std::uint8_t>;

const secure::secret c2a = key_of(11);
const secure::secret a2c = key_of(12);

// What an integrity stream puts on the wire for these writes, cut into records.
std::vector<record> sealed_records(const std::vector<std::string>& writes, secure::mac_kind kind)
{
    auto p = tcp_pair();
    secure::integrity_stream w(p->a, c2a, a2c, kind);
    for (const auto& m : writes) {
        const iovec iov {const_cast<char*>(m.data()), m.size()};
        BOOST_REQUIRE_EQUAL(w.writev(&iov, 1), static_cast<ssize_t>(m.size()));
    }
    BOOST_REQUIRE_EQUAL(w.flush(), 0);
    ::usleep(20000);
    std::vector<std::uint8_t> raw(1 << 20);
    const ssize_t n = ::recv(p->b, raw.data(), raw.size(), 0);
    BOOST_REQUIRE(n > 0);
    raw.resize(static_cast<std::size_t>(n));
    std::vector<record> out;
    for (std::size_t at = 0; at < raw.size();) {
        const std::size_t len = raw[at] | raw[at + 1] << 8 | raw[at + 2] << 16 | std::size_t {raw[at + 3]} << 24;
        out.emplace_back(raw.begin() + at, raw.begin() + at + len + secure::record_overhead);
        at += len + secure::record_overhead;
    }
    return out;
}

struct fed {
    std::string data; // what read returned before it stopped
    ssize_t last = 0; // the read that stopped it
    int err = 0;
    std::string why;
};

// Feeds raw bytes to an acceptor-side integrity stream (optionally ending
// the connection after them) and reads until it stops.
fed feed(const std::vector<std::uint8_t>& raw, bool then_close, secure::mac_kind kind,
    const secure::secret& recv_key = c2a)
{
    auto p = tcp_pair();
    secure::integrity_stream r(p->b, a2c, recv_key, kind);
    BOOST_REQUIRE_EQUAL(::send(p->a, raw.data(), raw.size(), 0), static_cast<ssize_t>(raw.size()));
    if (then_close)
        ::shutdown(p->a, SHUT_WR);
    ::usleep(20000);
    fed f;
    char b[100];
    for (int i = 0; i < 1000; ++i) {
        f.last = r.read(b, sizeof b);
        if (f.last <= 0) {
            f.err = f.last < 0 ? errno : 0;
            break;
        }
        f.data.append(b, static_cast<std::size_t>(f.last));
    }
    f.why = r.error();
    if (f.err == EBADMSG) {
        // Dead from then on.
        BOOST_CHECK_EQUAL(r.read(b, sizeof b), -1);
        BOOST_CHECK_EQUAL(errno, EBADMSG);
        BOOST_CHECK(r.buffered_input());
    }
    return f;
}

std::vector<std::uint8_t> join(std::initializer_list<const record*> rs)
{
    std::vector<std::uint8_t> v;
    for (const auto* r : rs)
        v.insert(v.end(), r->begin(), r->end());
    return v;
}

bool bad(const fed& f, const char* word)
{
    return f.last == -1 && f.err == EBADMSG && f.why.find(word) != std::string::npos;
}

} // namespace

BOOST_AUTO_TEST_SUITE(secure_integrity_records)

BOOST_AUTO_TEST_CASE(any_change_to_the_records_is_detected)
{
    for (const auto kind : {secure::mac_kind::gmac, secure::mac_kind::hmac_sha256}) {
        BOOST_TEST_CONTEXT(secure::mac_name(kind))
        {
            const auto r = sealed_records({"first", "second", "third"}, kind);
            BOOST_REQUIRE_EQUAL(r.size(), 3u);
            BOOST_CHECK_EQUAL(r[0].size(), 5 + secure::record_overhead);

            auto f = feed(join({&r[0], &r[1], &r[2]}), true, kind);
            BOOST_CHECK_EQUAL(f.data, "firstsecondthird");
            BOOST_CHECK_EQUAL(f.last, 0); // the end at a record boundary is a clean end

            auto flipped = r[1];
            flipped[6] ^= 0x20; // a payload byte
            f = feed(join({&r[0], &flipped, &r[2]}), false, kind);
            BOOST_CHECK_EQUAL(f.data, "first"); // verified bytes only
            BOOST_CHECK_MESSAGE(bad(f, "record 1 (6 bytes) fails"), f.why);

            flipped = r[0];
            flipped.back() ^= 1; // the tag
            f = feed(join({&flipped}), false, kind);
            BOOST_CHECK(f.data.empty());
            BOOST_CHECK_MESSAGE(bad(f, "fails"), f.why);

            flipped = r[0];
            flipped[0] = 4; // a shorter length: the tag no longer matches
            f = feed(join({&flipped}), false, kind);
            BOOST_CHECK_MESSAGE(bad(f, "fails"), f.why);

            flipped = r[0];
            flipped[2] = 1; // beyond the bound: refused before any MAC
            f = feed(join({&flipped}), false, kind);
            BOOST_CHECK_MESSAGE(bad(f, "claims a payload of 65541 bytes"), f.why);

            flipped = r[0];
            flipped[0] = 0; // empty records do not exist
            flipped[1] = 0;
            f = feed(join({&flipped}), false, kind);
            BOOST_CHECK_MESSAGE(bad(f, "allowed: 1 to 16384"), f.why);

            auto cut = join({&r[0], &r[1]});
            cut.pop_back();
            f = feed(cut, true, kind);
            BOOST_CHECK_EQUAL(f.data, "first");
            BOOST_CHECK_MESSAGE(bad(f, "truncated"), f.why);

            f = feed(join({&r[0], &r[0]}), false, kind); // replayed
            BOOST_CHECK_EQUAL(f.data, "first");
            BOOST_CHECK_MESSAGE(bad(f, "record 1"), f.why);

            f = feed(join({&r[1], &r[0]}), false, kind); // reordered
            BOOST_CHECK(f.data.empty());
            BOOST_CHECK_MESSAGE(bad(f, "record 0"), f.why);

            f = feed(join({&r[0], &r[2]}), false, kind); // one dropped
            BOOST_CHECK_EQUAL(f.data, "first");
            BOOST_CHECK_MESSAGE(bad(f, "record 1"), f.why);

            f = feed(join({&r[0]}), false, kind, a2c); // reflected: the other direction's key
            BOOST_CHECK_MESSAGE(bad(f, "fails"), f.why);

            const auto other = kind == secure::mac_kind::gmac ? secure::mac_kind::hmac_sha256 : secure::mac_kind::gmac;
            f = feed(join({&r[0]}), false, other); // the other MAC
            BOOST_CHECK_MESSAGE(bad(f, "fails"), f.why);
        }
    }
}

BOOST_AUTO_TEST_CASE(records_gather_small_writes_and_split_large_ones)
{
    auto r = sealed_records({std::string(16384, 'x'), std::string(16385, 'y')}, secure::mac_kind::gmac);
    BOOST_REQUIRE_EQUAL(r.size(), 3u);
    BOOST_CHECK_EQUAL(r[0].size(), 16384 + secure::record_overhead);
    BOOST_CHECK_EQUAL(r[2].size(), 1 + secure::record_overhead);
    // Many iovecs in one writev make one record.
    auto p = tcp_pair();
    secure::integrity_stream w(p->a, c2a, a2c, secure::mac_kind::gmac);
    const char piece[7] = "abcdef";
    std::vector<iovec> iov(60, iovec {const_cast<char*>(piece), 6});
    BOOST_REQUIRE_EQUAL(w.writev(iov.data(), static_cast<int>(iov.size())), 360);
    BOOST_CHECK_EQUAL(w.counters().records_sent, 1u);
}

BOOST_AUTO_TEST_SUITE_END()

namespace {

// Relays bytes between the two halves of a man in the middle, flipping the
// byte at offset `flip_at` (counted from the first byte it relays after
// `arm` is set) of the connector-to-acceptor direction.
struct middleman {
    std::unique_ptr<fd_pair> left = tcp_pair(); // connector <-> middle
    std::unique_ptr<fd_pair> right = tcp_pair(); // middle <-> acceptor
    bool armed = false;
    std::size_t flip_at = 0;
    std::size_t seen = 0;

    void pump()
    {
        std::uint8_t b[65536];
        ssize_t n = ::recv(left->b, b, sizeof b, 0);
        if (n > 0) {
            if (armed) {
                if (flip_at >= seen && flip_at < seen + static_cast<std::size_t>(n))
                    b[flip_at - seen] ^= 0x01;
                seen += static_cast<std::size_t>(n);
            }
            BOOST_REQUIRE_EQUAL(::send(right->a, b, static_cast<std::size_t>(n), 0), n);
        }
        n = ::recv(right->a, b, sizeof b, 0);
        if (n > 0)
            BOOST_REQUIRE_EQUAL(::send(left->b, b, static_cast<std::size_t>(n), 0), n);
    }
};

} // namespace

BOOST_AUTO_TEST_SUITE(secure_tls)

BOOST_AUTO_TEST_CASE(a_flipped_ciphertext_byte_is_ebadmsg)
{
    for (const std::size_t at : {std::size_t {0}, std::size_t {3}, std::size_t {10}, std::size_t {40}}) {
        BOOST_TEST_CONTEXT("byte " << at)
        {
            middleman m;
            const secure::secret psk = key_of(5);
            secure::tls_stream c(m.left->a, secure::stream_role::connector, psk, {});
            secure::tls_stream a(m.right->b, secure::stream_role::acceptor, psk, {});
            handshake_status sc = handshake_status::want_write, sa = handshake_status::want_read;
            for (int i = 0; i < 2000 && (sc != handshake_status::done || sa != handshake_status::done); ++i) {
                sc = c.handshake();
                sa = a.handshake();
                m.pump();
                BOOST_REQUIRE(sc != handshake_status::failed && sa != handshake_status::failed);
                ::usleep(100);
            }
            BOOST_REQUIRE(sc == handshake_status::done && sa == handshake_status::done);
            BOOST_CHECK_MESSAGE(c.describe().find("psk_dhe_ke X25519") != std::string::npos, c.describe());
            for (int i = 0; i < 20; ++i)
                m.pump(); // anything left of the handshake goes through untouched
            m.armed = true;
            m.flip_at = at;
            // Several records: a flipped length bit makes the receiver wait
            // for a longer record, which the following ones then complete.
            const std::string msg(30, 'm');
            const iovec iov {const_cast<char*>(msg.data()), msg.size()};
            char b[64];
            ssize_t k = -1;
            for (int i = 0; i < 200; ++i) {
                BOOST_REQUIRE_EQUAL(c.writev(&iov, 1), 30);
                m.pump();
                k = a.read(b, sizeof b);
                if (k >= 0 || errno != EAGAIN)
                    break;
                ::usleep(500);
            }
            BOOST_CHECK_EQUAL(k, -1);
            BOOST_CHECK_EQUAL(errno, EBADMSG);
            BOOST_CHECK_MESSAGE(!a.error().empty(), "no message");
            BOOST_CHECK_EQUAL(a.read(b, sizeof b), -1);
            BOOST_CHECK_EQUAL(errno, EBADMSG);
        }
    }
}

BOOST_AUTO_TEST_CASE(without_forward_secrecy_no_group_is_negotiated_and_kernel_offload_is_reported)
{
    variant v {"tls no dhe", secure::protection::encryption, {}};
    v.opt.tls.forward_secrecy = false;
    auto p = open_pair(v);
    BOOST_REQUIRE(handshake_both(*p.c, *p.a, p.fds->a, p.fds->b));
    BOOST_CHECK_MESSAGE(p.c->describe().find("psk_ke (no DHE)") != std::string::npos, p.c->describe());
    BOOST_CHECK_MESSAGE(p.a->describe().find("psk_ke (no DHE)") != std::string::npos, p.a->describe());
    // Whatever the kernel offers, the description says it and offload() agrees.
    const auto o = p.c->offload();
    BOOST_CHECK_EQUAL(p.c->describe().find("kTLS send") != std::string::npos, o.send);
    BOOST_TEST_MESSAGE("tls stream here: " << p.c->describe());
}

BOOST_AUTO_TEST_CASE(scheduled_key_updates_keep_the_stream_intact)
{
    auto fds = tcp_pair();
    secure::tls_options opt;
    opt.key_update_records = 10;
    const secure::secret psk = key_of(6);
    secure::tls_stream c(fds->a, secure::stream_role::connector, psk, opt);
    secure::tls_stream a(fds->b, secure::stream_role::acceptor, psk, opt);
    BOOST_REQUIRE(handshake_both(c, a, fds->a, fds->b));
    const auto big = random_bytes(1 << 20, 8);
    BOOST_CHECK(transfer(c, a, fds->a, fds->b, big, 100000, 2, 50000) == big);
    BOOST_CHECK(transfer(a, c, fds->b, fds->a, big, 100000, 2, 50000) == big);
    if (!c.offload().send) {
        BOOST_CHECK_GE(c.key_updates(), 6u); // 64 records of 16 KiB
        BOOST_CHECK_GE(a.key_updates(), 6u);
    }
}

BOOST_AUTO_TEST_CASE(a_closed_peer_is_the_end_of_the_stream_or_an_error_never_a_signal)
{
    for (const bool socket_bio : {false, true}) {
        BOOST_TEST_CONTEXT("OpenSSL's socket BIO: " << socket_bio)
        {
            variant v {"tls", secure::protection::encryption, {}};
            v.opt.tls.openssl_socket_bio = socket_bio;
            auto p = open_pair(v);
            BOOST_REQUIRE(handshake_both(*p.c, *p.a, p.fds->a, p.fds->b));
            ::close(p.fds->b);
            p.fds->b = -1;
            ::usleep(20000);
            // Writing into the closed connection: the first write leaves and
            // the peer's kernel answers with a reset; once that error is taken
            // (here by SO_ERROR, as a path checking its socket would), a write
            // fails with EPIPE, which is SIGPIPE unless the stream prevents it.
            const std::string msg(1000, 'z');
            const iovec iov {const_cast<char*>(msg.data()), msg.size()};
            BOOST_CHECK_EQUAL(p.c->writev(&iov, 1), 1000);
            p.c->flush();
            ::usleep(20000);
            int so_error = 0;
            socklen_t so_len = sizeof so_error;
            ::getsockopt(p.fds->a, SOL_SOCKET, SO_ERROR, &so_error, &so_len);
            BOOST_CHECK(so_error == EPIPE || so_error == ECONNRESET);
            ssize_t k = 0;
            for (int i = 0; i < 5 && k >= 0; ++i) {
                k = p.c->writev(&iov, 1);
                if (k >= 0)
                    p.c->flush();
            }
            BOOST_CHECK_EQUAL(k, -1);
            BOOST_CHECK(errno == EPIPE || errno == ECONNRESET);
            sigset_t pending;
            sigpending(&pending);
            BOOST_CHECK(!sigismember(&pending, SIGPIPE)); // none left behind either
        }
    }
    // Reading: the peer's close is the end of the stream.
    auto p = open_pair({"tls", secure::protection::encryption, {}});
    BOOST_REQUIRE(handshake_both(*p.c, *p.a, p.fds->a, p.fds->b));
    ::close(p.fds->b);
    p.fds->b = -1;
    ::usleep(20000);
    std::uint8_t b[16];
    const ssize_t end = p.c->read(b, sizeof b);
    BOOST_CHECK_MESSAGE(end == 0, "read " << end << " errno " << std::strerror(errno) << ": " << p.c->error());
}

BOOST_AUTO_TEST_SUITE_END()
