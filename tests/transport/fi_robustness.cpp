// SPDX-License-Identifier: BSD-3-Clause
// Robustness checks of the hashi provider through the plain libfabric API,
// with real processes and sockets:
//
//   fi-robustness peer-death   a child sends 4 GiB and is killed in the
//                              middle; the parent's receive must end with an
//                              error (never hang), and the provider's message
//                              names the peer.
//   fi-robustness malformed    a raw TCP client speaks to a live endpoint:
//                              a stranger without the job's key (plain, and
//                              claiming the real peer's address, with a
//                              message injected after its proof), a hello
//                              for another endpoint, then a holder of the
//                              key sending frames of an unknown type or cut
//                              in half. The endpoint must refuse each
//                              without revealing anything, and keep serving
//                              its real peer.
//   fi-robustness crossing     parent and child connect to each other at the
//                              same moment, many times over: one connection
//                              survives each time and no message is lost.
//   fi-robustness flow         a child that does not read: sends queue up
//                              until -FI_EAGAIN (bounded queues), and once it
//                              reads, every message arrives; then the child
//                              closes its endpoint right after its last
//                              sends, and the parent still gets all of them.
//   fi-robustness liveness     (FI_HASHI_PEER_TIMEOUT=4 FI_HASHI_HEARTBEAT=1,
//                              HASHI_JOB_KEY set) a child computes 6 s
//                              outside libfabric while the parent waits on
//                              it: the wait must succeed; meanwhile a ping
//                              under another key gets no answer and one
//                              under the job key gets a valid pong. Then the
//                              child stops itself (SIGSTOP): the parent's
//                              receive must end with an error.
//
// Exit 0 when every expectation held; messages say which did not.
#include "transport/address.hpp"
#include "transport/engine/job_key.hpp"
#include "transport/wire/frame.hpp"
#include "transport/wire/handshake.hpp"
#include "transport/wire/heartbeat.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <signal.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int failures = 0;

void check(bool ok, const std::string& what)
{
    std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
    std::fflush(stdout);
    if (!ok)
        ++failures;
}

[[noreturn]] void die(const char* what, int rc)
{
    std::fprintf(stderr, "fi-robustness: %s: %s\n", what, fi_strerror(-rc));
    std::exit(2);
}

struct fabric_ep {
    fi_info* info = nullptr;
    fid_fabric* fabric = nullptr;
    fid_domain* domain = nullptr;
    fid_av* av = nullptr;
    fid_cq* cq = nullptr;
    fid_ep* ep = nullptr;
    std::array<std::uint8_t, 32> name {};

    fabric_ep()
    {
        fi_info* hints = fi_allocinfo();
        // Directed receives (fi_trecv from one peer) need FI_DIRECTED_RECV: without it
        // libfabric says a receive's source is ignored, and the provider ignores it.
        hints->caps = FI_TAGGED | FI_MSG | FI_DIRECTED_RECV;
        hints->ep_attr->type = FI_EP_RDM;
        hints->fabric_attr->prov_name = strdup("hashi");
        int rc = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &info);
        fi_freeinfo(hints);
        if (rc != 0)
            die("fi_getinfo for hashi (is FI_PROVIDER_PATH set?)", rc);
        if ((rc = fi_fabric(info->fabric_attr, &fabric, nullptr)) != 0)
            die("fi_fabric", rc);
        if ((rc = fi_domain(fabric, info, &domain, nullptr)) != 0)
            die("fi_domain", rc);
        fi_av_attr av_attr {};
        av_attr.type = FI_AV_TABLE;
        if ((rc = fi_av_open(domain, &av_attr, &av, nullptr)) != 0)
            die("fi_av_open", rc);
        fi_cq_attr cq_attr {};
        cq_attr.format = FI_CQ_FORMAT_TAGGED;
        if ((rc = fi_cq_open(domain, &cq_attr, &cq, nullptr)) != 0)
            die("fi_cq_open", rc);
        if ((rc = fi_endpoint(domain, info, &ep, nullptr)) != 0)
            die("fi_endpoint", rc);
        fi_ep_bind(ep, &av->fid, 0);
        fi_ep_bind(ep, &cq->fid, FI_SEND | FI_RECV);
        if ((rc = fi_enable(ep)) != 0)
            die("fi_enable", rc);
        std::size_t len = name.size();
        if ((rc = fi_getname(&ep->fid, name.data(), &len)) != 0)
            die("fi_getname", rc);
    }

    void insert(const std::vector<std::array<std::uint8_t, 32>>& names)
    {
        for (const auto& n : names)
            if (fi_av_insert(av, n.data(), 1, nullptr, 0, nullptr) != 1)
                die("fi_av_insert", -FI_EINVAL);
    }

    // Waits for one completion; returns 0, or the error code of an error
    // entry, or -FI_ETIMEDOUT.
    int wait(double seconds, fi_cq_tagged_entry* out = nullptr)
    {
        const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
        while (std::chrono::steady_clock::now() < end) {
            fi_cq_tagged_entry e {};
            const ssize_t n = fi_cq_read(cq, &e, 1);
            if (n == 1) {
                if (out != nullptr)
                    *out = e;
                return 0;
            }
            if (n == -FI_EAVAIL) {
                fi_cq_err_entry err {};
                fi_cq_readerr(cq, &err, 0);
                return err.err;
            }
        }
        return -FI_ETIMEDOUT;
    }

    ~fabric_ep()
    {
        fi_close(&ep->fid);
        fi_close(&cq->fid);
        fi_close(&av->fid);
        fi_close(&domain->fid);
        fi_close(&fabric->fid);
        fi_freeinfo(info);
    }
};

void write_all(int fd, const void* p, std::size_t n)
{
    const auto* b = static_cast<const std::uint8_t*>(p);
    while (n > 0) {
        const ssize_t w = ::write(fd, b, n);
        if (w <= 0)
            std::exit(3);
        b += w;
        n -= static_cast<std::size_t>(w);
    }
}

void read_all(int fd, void* p, std::size_t n)
{
    auto* b = static_cast<std::uint8_t*>(p);
    while (n > 0) {
        const ssize_t r = ::read(fd, b, n);
        if (r <= 0)
            std::exit(3);
        b += r;
        n -= static_cast<std::size_t>(r);
    }
}

// The parent (index 0) and a forked child (index 1) swap their cards over
// pipes and insert both, in the same order, like MPICH does.
struct pair_setup {
    int to_child[2];
    int to_parent[2];
    pair_setup()
    {
        if (::pipe(to_child) != 0 || ::pipe(to_parent) != 0)
            std::exit(2);
    }
    // Swap the cards and insert them, the parent's first (fi_addr 0).
    void join_as_child(fabric_ep& me)
    {
        std::array<std::uint8_t, 32> parent {};
        write_all(to_parent[1], me.name.data(), 32);
        read_all(to_child[0], parent.data(), 32);
        me.insert({parent, me.name});
    }
    std::array<std::uint8_t, 32> join_as_parent(fabric_ep& me)
    {
        std::array<std::uint8_t, 32> kid {};
        read_all(to_parent[0], kid.data(), 32);
        write_all(to_child[1], me.name.data(), 32);
        me.insert({me.name, kid});
        return kid;
    }
};

int peer_death()
{
    // Large enough that it cannot finish in the moment before the kill; the
    // buffers are never written by the sender, so they cost no memory there.
    constexpr std::size_t size = 4ull << 30;
    pair_setup pipes;
    const pid_t child = ::fork();
    if (child == 0) {
        fabric_ep me;
        pipes.join_as_child(me);
        // A first small message, so that the parent knows the connection
        // (and who is at its other end) before it kills this process: under
        // load a child still starting at the kill had no connection yet,
        // and the parent could only notice the death by liveness pings.
        static char hello = 1;
        int rc = fi_tsend(me.ep, &hello, 1, nullptr, 0, 6, nullptr);
        if (rc != 0)
            die("child fi_tsend", rc);
        auto* buf = static_cast<char*>(std::malloc(size));
        rc = fi_tsend(me.ep, buf, size, nullptr, 0, 7, nullptr);
        if (rc != 0)
            die("child fi_tsend", rc);
        for (;;) {
            fi_cq_tagged_entry e;
            fi_cq_read(me.cq, &e, 1);
        }
    }
    fabric_ep me;
    pipes.join_as_parent(me);
    char hello = 0;
    int rc = fi_trecv(me.ep, &hello, 1, nullptr, 1, 6, 0, nullptr);
    check(rc == 0 && me.wait(30) == 0 && hello == 1, "the child's first message arrived (it is connected)");
    auto* buf = static_cast<char*>(std::malloc(size));
    rc = fi_trecv(me.ep, buf, size, nullptr, 1, 7, 0, nullptr);
    check(rc == 0, "parent posted a 4 GiB receive from the child");
    // Receive for a moment, then the child dies without a goodbye.
    const int early = me.wait(0.3);
    check(early == -FI_ETIMEDOUT, "the transfer was still under way when the child was killed");
    ::kill(child, SIGKILL);
    const auto start = std::chrono::steady_clock::now();
    const int err = me.wait(30);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    int status = 0;
    ::waitpid(child, &status, 0);
    check(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "the child was killed");
    check(err != -FI_ETIMEDOUT, "the receive did not hang (ended " + std::to_string(took) + " s after the kill)");
    check(err == FI_EIO, std::string("the receive ended with an I/O error: ") + (err > 0 ? fi_strerror(err) : "none"));
    // The next send to the dead peer fails at once.
    char one = 1;
    rc = static_cast<int>(fi_tinject(me.ep, &one, 1, 1, 8));
    check(rc == -FI_EIO, "a new send to the dead peer fails with FI_EIO");
    std::free(buf);
    return failures;
}

int malformed()
{
    pair_setup pipes;
    const pid_t child = ::fork();
    if (child == 0) {
        // The victim: serves a ping-pong to its parent until told to stop.
        fabric_ep me;
        std::array<std::uint8_t, 32> parent {};
        write_all(pipes.to_parent[1], me.name.data(), 32);
        read_all(pipes.to_child[0], parent.data(), 32);
        me.insert({parent, me.name});
        for (;;) {
            std::uint32_t v = 0;
            fi_trecv(me.ep, &v, sizeof v, nullptr, 0, 1, 0, nullptr);
            if (me.wait(60) != 0)
                std::_Exit(4);
            if (v == 0)
                std::_Exit(0);
            ++v;
            fi_tsend(me.ep, &v, sizeof v, nullptr, 0, 2, nullptr);
            if (me.wait(60) != 0)
                std::_Exit(5);
        }
    }
    fabric_ep me;
    std::array<std::uint8_t, 32> kid {};
    read_all(pipes.to_parent[0], kid.data(), 32);
    write_all(pipes.to_child[1], me.name.data(), 32);
    me.insert({me.name, kid});
    const auto kid_addr = *hashi::fi::endpoint_address::decode(kid.data(), kid.size());

    auto ping = [&](std::uint32_t v) {
        std::uint32_t back = 0;
        fi_trecv(me.ep, &back, sizeof back, nullptr, 1, 2, 0, nullptr);
        fi_tsend(me.ep, &v, sizeof v, nullptr, 1, 1, nullptr);
        const int a = me.wait(20);
        const int b = me.wait(20);
        return a == 0 && b == 0 && back == v + 1;
    };
    check(ping(41), "ping-pong with the child before the attacks");

    auto raw = [&]() {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in sin {};
        sin.sin_family = AF_INET;
        sin.sin_addr.s_addr = htonl(kid_addr.ipv4);
        sin.sin_port = htons(kid_addr.port);
        if (::connect(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin) != 0)
            die("raw connect", -FI_EIO);
        timeval tv {20, 0}; // no check may hang
        ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        return fd;
    };
    auto frame = [](hashi::wire::frame_type t, const auto& body) {
        hashi::wire::frame_header fh;
        fh.type = t;
        fh.length = body.size();
        std::vector<std::uint8_t> out;
        const auto hb = hashi::wire::encode_header(fh);
        out.insert(out.end(), hb.begin(), hb.end());
        out.insert(out.end(), body.begin(), body.end());
        return out;
    };
    // Reads up to n bytes, fewer if the endpoint closes the connection.
    auto read_upto = [](int fd, std::size_t n) {
        std::vector<std::uint8_t> got(n);
        std::size_t at = 0;
        while (at < n) {
            const ssize_t r = ::read(fd, got.data() + at, n - at);
            if (r <= 0)
                break;
            at += static_cast<std::size_t>(r);
        }
        got.resize(at);
        return got;
    };
    auto closed_without_a_byte = [&](int fd) { return read_upto(fd, 1).empty(); };
    const auto job = std::getenv("HASHI_JOB_ID") != nullptr ? std::strtoull(std::getenv("HASHI_JOB_ID"), nullptr, 16) : 0;
    std::string err;
    const auto real_key = hashi::fi::job_key::from_environment(err);
    if (!real_key || real_key->is_random())
        die("HASHI_JOB_KEY must be set for the malformed checks", -FI_EINVAL);
    const auto stranger_key = hashi::fi::job_key::random();
    // A connector's handshake under `key`, claiming to be `from`: returns
    // the connection and what the endpoint answered to the hello.
    struct attempt {
        int fd = -1;
        std::vector<std::uint8_t> challenge_bytes;
        bool challenge_verified = false;
    };
    auto connect_as = [&](const hashi::fi::job_key& key, const std::array<std::uint8_t, 32>& from) {
        attempt a;
        a.fd = raw();
        hashi::fi::handshake_transcript t;
        t.job_id = job;
        t.connector = from;
        t.acceptor = kid;
        t.connector_nonce = hashi::fi::fresh_nonce();
        hashi::wire::hello h {from, kid, t.connector_nonce};
        auto out = frame(hashi::wire::frame_type::hello, hashi::wire::encode(h));
        hashi::wire::proof pr;
        write_all(a.fd, out.data(), out.size());
        a.challenge_bytes = read_upto(a.fd, hashi::wire::header_size + hashi::wire::challenge_size);
        if (a.challenge_bytes.size() == hashi::wire::header_size + hashi::wire::challenge_size) {
            auto ch = hashi::wire::decode_challenge(
                a.challenge_bytes.data() + hashi::wire::header_size, hashi::wire::challenge_size);
            if (auto* got = std::get_if<hashi::wire::challenge>(&ch)) {
                t.acceptor_nonce = got->acceptor_nonce;
                t.status = got->status;
                a.challenge_verified = hashi::fi::same_mac(got->acceptor_mac, key.acceptor_mac(t));
            }
        }
        pr.connector_mac = key.connector_mac(t);
        pr.who = {1, key.is_random() ? "stranger" : "member"};
        out = frame(hashi::wire::frame_type::proof, hashi::wire::encode(pr));
        write_all(a.fd, out.data(), out.size());
        return a;
    };
    auto contains = [](const std::vector<std::uint8_t>& hay, const void* needle, std::size_t n) {
        const auto* p = static_cast<const std::uint8_t*>(needle);
        return std::search(hay.begin(), hay.end(), p, p + n) != hay.end();
    };
    hashi::fi::endpoint_address fake = kid_addr;
    fake.port = 1;
    auto fake_name = [&](std::uint64_t nonce) {
        fake.nonce = nonce;
        return fake.encode();
    };
    // A tagged message with tag 1 and value 0: if the child took it for its
    // parent's, it would stop answering (value 0 means "exit").
    auto injected = [&] {
        hashi::wire::frame_header fh;
        fh.type = hashi::wire::frame_type::tagged;
        fh.seq = 1;
        fh.tag = 1;
        fh.length = 4;
        std::vector<std::uint8_t> out;
        const auto hb = hashi::wire::encode_header(fh);
        out.insert(out.end(), hb.begin(), hb.end());
        out.insert(out.end(), 4, 0);
        return out;
    }();

    // 1. A stranger (without the key) gets a challenge that names neither
    // the job nor the endpoint, cannot check it, and is closed after its
    // proof without another byte.
    auto s = connect_as(stranger_key, fake_name(1));
    check(s.challenge_bytes.size() == hashi::wire::header_size + hashi::wire::challenge_size,
        "a stranger's hello is answered with a challenge only");
    check(!s.challenge_verified, "the challenge proves nothing to a stranger (MAC under the job's key)");
    {
        const auto pid = static_cast<std::uint32_t>(child);
        const std::uint64_t job_bytes = job;
        check(!contains(s.challenge_bytes, &job_bytes, sizeof job_bytes) &&
                !contains(s.challenge_bytes, kid.data() + 8, 8) && !contains(s.challenge_bytes, &pid, sizeof pid),
            "the challenge carries neither the job id, nor the endpoint's address, nor its pid");
    }
    write_all(s.fd, injected.data(), injected.size());
    check(closed_without_a_byte(s.fd), "a stranger's forged proof closes the connection, nothing more is sent");
    ::close(s.fd);

    // 2. A stranger that claims to be the parent (impersonation) and sends
    // a message as it: refused, and the message is never delivered (the
    // ping-pong below would stop).
    s = connect_as(stranger_key, me.name);
    write_all(s.fd, injected.data(), injected.size());
    check(closed_without_a_byte(s.fd), "a stranger claiming the parent's address is closed after its proof");
    ::close(s.fd);
    check(ping(77), "the child still answers its real parent after the impersonation");

    // 3. A hello for another endpoint (a stale address): closed, nothing
    // said at all.
    {
        const int fd = raw();
        auto other = kid_addr;
        other.nonce ^= 1;
        hashi::wire::hello h {fake_name(2), other.encode(), hashi::fi::fresh_nonce()};
        const auto out = frame(hashi::wire::frame_type::hello, hashi::wire::encode(h));
        write_all(fd, out.data(), out.size());
        check(closed_without_a_byte(fd), "a hello for another endpoint is closed without an answer");
        ::close(fd);
    }

    // 4. A member of the job (the key), then a frame of unknown type.
    auto m = connect_as(*real_key, fake_name(3));
    check(m.challenge_verified, "the endpoint proves itself to a holder of the job's key");
    auto ack = read_upto(m.fd, hashi::wire::header_size + hashi::wire::hello_ack_size);
    check(ack.size() == hashi::wire::header_size + hashi::wire::hello_ack_size &&
            std::holds_alternative<hashi::wire::hello_ack>(
                hashi::wire::decode_hello_ack(ack.data() + hashi::wire::header_size, hashi::wire::hello_ack_size)),
        "a holder of the key that proved itself gets the hello_ack");
    std::uint8_t junk[hashi::wire::header_size] = {99};
    write_all(m.fd, junk, sizeof junk);
    check(closed_without_a_byte(m.fd), "a frame of unknown type makes the endpoint close that connection");
    ::close(m.fd);

    // 5. A tagged frame claiming more payload than allowed.
    m = connect_as(*real_key, fake_name(4));
    read_upto(m.fd, hashi::wire::header_size + hashi::wire::hello_ack_size);
    hashi::wire::frame_header big;
    big.type = hashi::wire::frame_type::tagged;
    big.seq = 1;
    big.length = ~0ULL;
    auto bh = hashi::wire::encode_header(big);
    write_all(m.fd, bh.data(), bh.size());
    check(closed_without_a_byte(m.fd), "a frame with an absurd length makes the endpoint close that connection");
    ::close(m.fd);

    // 6. Half a frame, then the connection drops.
    m = connect_as(*real_key, fake_name(5));
    read_upto(m.fd, hashi::wire::header_size + hashi::wire::hello_ack_size);
    hashi::wire::frame_header half;
    half.type = hashi::wire::frame_type::tagged;
    half.seq = 1;
    half.length = 1000;
    auto hh = hashi::wire::encode_header(half);
    write_all(m.fd, hh.data(), hh.size());
    write_all(m.fd, "only a bit", 10);
    ::close(m.fd);

    // 7. Random bytes instead of a handshake.
    int fd = raw();
    std::uint8_t noise[300];
    for (std::size_t i = 0; i < sizeof noise; ++i)
        noise[i] = static_cast<std::uint8_t>(i * 37 + 11);
    write_all(fd, noise, sizeof noise);
    check(closed_without_a_byte(fd), "bytes that are not a handshake make the endpoint close the connection");
    ::close(fd);

    check(ping(100), "ping-pong with the child still works after the attacks");
    std::uint32_t stop = 0;
    fi_tsend(me.ep, &stop, sizeof stop, nullptr, 1, 1, nullptr);
    me.wait(20);
    int status = 0;
    ::waitpid(child, &status, 0);
    check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child survived and exited cleanly");
    return failures;
}

int crossing()
{
    constexpr int rounds = 30;
    pair_setup pipes;
    const pid_t child = ::fork();
    const bool parent = child != 0;
    const int out = parent ? pipes.to_child[1] : pipes.to_parent[1];
    const int in = parent ? pipes.to_parent[0] : pipes.to_child[0];
    int ok_rounds = 0;
    for (int r = 0; r < rounds; ++r) {
        fabric_ep me;
        std::array<std::uint8_t, 32> other {};
        write_all(out, me.name.data(), 32);
        read_all(in, other.data(), 32);
        // The same order on both sides, as MPICH does: parent 0, child 1.
        if (parent)
            me.insert({me.name, other});
        else
            me.insert({other, me.name});
        const fi_addr_t peer = parent ? 1 : 0;
        // Both wait for a go, then send at once: each side's first send
        // connects while the other side's connection is on its way in.
        char go = 'g';
        write_all(out, &go, 1);
        read_all(in, &go, 1);
        std::uint32_t mine = static_cast<std::uint32_t>(r * 2 + (parent ? 0 : 1)), theirs = 0;
        fi_trecv(me.ep, &theirs, sizeof theirs, nullptr, peer, 9, 0, nullptr);
        fi_tsend(me.ep, &mine, sizeof mine, nullptr, peer, 9, nullptr);
        const int a = me.wait(20), b = me.wait(20);
        if (a == 0 && b == 0 && theirs == static_cast<std::uint32_t>(r * 2 + (parent ? 1 : 0)))
            ++ok_rounds;
        // Both finish the round before closing.
        write_all(out, &go, 1);
        read_all(in, &go, 1);
    }
    if (!parent)
        std::_Exit(ok_rounds == rounds ? 0 : 1);
    int status = 0;
    ::waitpid(child, &status, 0);
    check(ok_rounds == rounds,
        "parent: " + std::to_string(ok_rounds) + " of " + std::to_string(rounds) +
            " rounds of crossing connections delivered both messages");
    check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: every round delivered both messages");
    return failures;
}

int flow()
{
    constexpr int count = 20000;
    constexpr std::size_t big = 8u << 20;
    constexpr int burst = 3000;
    constexpr std::size_t burst_bytes = 4096;
    pair_setup pipes;
    const pid_t child = ::fork();
    if (child == 0) {
        int got = 0;
        {
            fabric_ep me;
            std::array<std::uint8_t, 32> parent {};
            write_all(pipes.to_parent[1], me.name.data(), 32);
            read_all(pipes.to_child[0], parent.data(), 32);
            me.insert({parent, me.name});
            // Do not read for a while: the parent's sends pile up.
            ::sleep(2);
            for (int i = 0; i < count; ++i) {
                std::uint32_t v = 0;
                fi_trecv(me.ep, &v, sizeof v, nullptr, 0, 1, 0, nullptr);
                if (me.wait(60) != 0 || v != static_cast<std::uint32_t>(i))
                    break;
                ++got;
            }
            std::vector<char> payload(big, 'q');
            fi_tsend(me.ep, payload.data(), payload.size(), nullptr, 0, 4, nullptr);
            me.wait(60);
            // A burst the parent does not read yet, then close at once:
            // fi_close must deliver what is still queued.
            std::vector<std::uint32_t> chunk(burst_bytes / 4);
            for (int i = 0; i < burst; ++i) {
                chunk[0] = static_cast<std::uint32_t>(i);
                while (fi_tinject(me.ep, chunk.data(), burst_bytes, 0, 3) == -FI_EAGAIN) {
                    fi_cq_tagged_entry e;
                    fi_cq_read(me.cq, &e, 1);
                }
            }
        } // fi_close of everything
        std::_Exit(got == count ? 0 : 10);
    }
    fabric_ep me;
    std::array<std::uint8_t, 32> kid {};
    read_all(pipes.to_parent[0], kid.data(), 32);
    write_all(pipes.to_child[1], me.name.data(), 32);
    me.insert({me.name, kid});
    int eagain = 0, sent = 0;
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (sent < count && std::chrono::steady_clock::now() < end) {
        std::uint32_t v = static_cast<std::uint32_t>(sent);
        const ssize_t rc = fi_tinject(me.ep, &v, sizeof v, 1, 1);
        if (rc == 0) {
            ++sent;
        } else if (rc == -FI_EAGAIN) {
            ++eagain;
            fi_cq_tagged_entry e;
            fi_cq_read(me.cq, &e, 1);
        } else {
            die("fi_tinject", static_cast<int>(rc));
        }
    }
    check(sent == count, "all " + std::to_string(count) + " sends were accepted eventually");
    check(eagain > 0, "a full send queue answered -FI_EAGAIN (" + std::to_string(eagain) + " times)");
    std::vector<char> payload(big);
    fi_trecv(me.ep, payload.data(), payload.size(), nullptr, 1, 4, 0, nullptr);
    fi_cq_tagged_entry e {};
    const int rc = me.wait(30, &e);
    // Slow reader now: the child's burst piles up in its queue while it closes.
    ::sleep(1);
    int got = 0;
    std::vector<std::uint32_t> chunk(burst_bytes / 4);
    for (int i = 0; i < burst; ++i) {
        fi_trecv(me.ep, chunk.data(), burst_bytes, nullptr, 1, 3, 0, nullptr);
        if (me.wait(30) != 0 || chunk[0] != static_cast<std::uint32_t>(i))
            break;
        ++got;
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child received every message in order");
    check(got == burst,
        "the " + std::to_string(burst) + " messages the child sent just before closing arrived in order (" +
            std::to_string(got) + ")");
    check(rc == 0 && e.len == big && payload[big - 1] == 'q', "the child's 8 MiB message arrived whole");
    return failures;
}

// One ping to the endpoint `card` under `key`; true when a pong that
// verifies under the job key and echoes the challenge comes back within 2 s.
bool ping_answered(const std::array<std::uint8_t, 32>& card, const hashi::wire::job_key& key,
    const hashi::wire::job_key& job_key)
{
    using namespace hashi;
    const auto a = fi::endpoint_address::decode(card.data(), card.size());
    const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
    wire::heartbeat ping;
    ping.sender = 0x5eed;
    ping.target = a->nonce;
    ping.challenge[0] = static_cast<std::uint8_t>(key[0] ^ 0x5a);
    const auto b = wire::encode_heartbeat(ping, key);
    sockaddr_in to {};
    to.sin_family = AF_INET;
    to.sin_addr.s_addr = htonl(a->ipv4);
    to.sin_port = htons(a->port);
    ::sendto(fd, b.data(), b.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
    pollfd pfd {fd, POLLIN, 0};
    bool ok = false;
    if (::poll(&pfd, 1, 2000) == 1) {
        std::uint8_t r[128];
        const ssize_t n = ::recv(fd, r, sizeof r, 0);
        auto d = wire::decode_heartbeat(r, n > 0 ? static_cast<std::size_t>(n) : 0);
        ok = std::holds_alternative<wire::heartbeat>(d) && wire::verify_heartbeat(r, job_key) &&
            std::get<wire::heartbeat>(d).kind == wire::heartbeat_kind::pong &&
            std::get<wire::heartbeat>(d).challenge == ping.challenge;
    }
    ::close(fd);
    return ok;
}

int liveness()
{
    const char* hex = std::getenv("HASHI_JOB_KEY");
    const auto job = hashi::fi::job_key::from_hex(hex != nullptr ? hex : "");
    if (!job)
        die("liveness needs HASHI_JOB_KEY (64 hex digits)", -FI_EINVAL);
    const hashi::wire::job_key key = job->material();
    pair_setup pipes;
    const pid_t child = ::fork();
    if (child == 0) {
        fabric_ep me;
        pipes.join_as_child(me);
        ::sleep(6); // computing, not in libfabric: only the liveness thread answers
        int one = 1;
        if (fi_tsend(me.ep, &one, sizeof one, nullptr, 0, 1, nullptr) != 0)
            std::_Exit(3);
        // The send completes once it is written: until then this is the
        // first message to the parent and may still be in its connection's
        // handshake, which a fixed number of progress calls does not bound
        // on a loaded machine or under emulation.
        if (me.wait(20) != 0)
            std::_Exit(4);
        ::raise(SIGSTOP);
        std::_Exit(0);
    }
    fabric_ep me;
    const auto other = pipes.join_as_parent(me);
    int got = 0;
    fi_trecv(me.ep, &got, sizeof got, nullptr, 1, 1, 0, nullptr);
    auto wrong = key;
    wrong[0] ^= 1;
    check(!ping_answered(other, wrong, key), "a ping under another key gets no answer");
    check(ping_answered(other, key, key), "a ping under the job key gets a pong that verifies");
    const auto start = std::chrono::steady_clock::now();
    const int rc = me.wait(30);
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    check(rc == 0 && got == 1,
        "the wait on a child computing 6 s outside libfabric succeeded (FI_HASHI_PEER_TIMEOUT=4; after " +
            std::to_string(waited) + " s)");
    // The child stops itself right after its send.
    fi_trecv(me.ep, &got, sizeof got, nullptr, 1, 2, 0, nullptr);
    const int rc2 = me.wait(30);
    check(rc2 == FI_EIO, "the wait on the stopped child ended with an error (" + std::to_string(rc2) + ")");
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    return failures;
}

} // namespace

int main(int argc, char** argv)
{
    const std::string what = argc > 1 ? argv[1] : "";
    if (what == "peer-death")
        return peer_death() == 0 ? 0 : 1;
    if (what == "malformed")
        return malformed() == 0 ? 0 : 1;
    if (what == "flow")
        return flow() == 0 ? 0 : 1;
    if (what == "crossing")
        return crossing() == 0 ? 0 : 1;
    if (what == "liveness")
        return liveness() == 0 ? 0 : 1;
    std::fprintf(stderr, "usage: fi-robustness peer-death|malformed|flow|crossing|liveness\n");
    return 2;
}
