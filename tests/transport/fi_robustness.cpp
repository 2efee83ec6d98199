// SPDX-License-Identifier: BSD-3-Clause
// Robustness checks of the hashi provider through the plain libfabric API,
// with real processes and sockets:
//
//   fi-robustness peer-death   a child sends 4 GiB and is killed in the
//                              middle; the parent's receive must end with an
//                              error (never hang), and the provider's message
//                              names the peer.
//   fi-robustness malformed    a raw TCP client speaks to a live endpoint:
//                              a handshake from another job, frames of an
//                              unknown type, a frame cut in half. The
//                              endpoint must refuse each, log why, and keep
//                              serving its real peer.
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
#include "transport/wire/frame.hpp"
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
        hints->caps = FI_TAGGED | FI_MSG;
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
        auto* buf = static_cast<char*>(std::malloc(size));
        int rc = fi_tsend(me.ep, buf, size, nullptr, 0, 7, nullptr);
        if (rc != 0)
            die("child fi_tsend", rc);
        for (;;) {
            fi_cq_tagged_entry e;
            fi_cq_read(me.cq, &e, 1);
        }
    }
    fabric_ep me;
    pipes.join_as_parent(me);
    auto* buf = static_cast<char*>(std::malloc(size));
    int rc = fi_trecv(me.ep, buf, size, nullptr, 1, 7, 0, nullptr);
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
        return fd;
    };
    auto hello_frame = [&](std::uint64_t job, std::uint64_t nonce) {
        hashi::fi::endpoint_address fake = kid_addr;
        fake.port = 1;
        fake.nonce = nonce;
        hashi::wire::hello h;
        h.job_id = job;
        h.from = fake.encode();
        h.to = kid;
        h.pid = 1;
        h.host = "attacker";
        hashi::wire::frame_header fh;
        fh.type = hashi::wire::frame_type::hello;
        fh.length = hashi::wire::hello_size;
        std::vector<std::uint8_t> out;
        const auto hb = hashi::wire::encode_header(fh);
        const auto body = hashi::wire::encode_hello(h);
        out.insert(out.end(), hb.begin(), hb.end());
        out.insert(out.end(), body.begin(), body.end());
        return out;
    };
    auto read_ack = [&](int fd) {
        std::vector<std::uint8_t> ack(hashi::wire::header_size + hashi::wire::hello_size);
        read_all(fd, ack.data(), ack.size());
        auto h = hashi::wire::decode_hello(ack.data() + hashi::wire::header_size, hashi::wire::hello_size);
        return std::get<hashi::wire::hello>(h).status;
    };
    const char* job_env = std::getenv("HASHI_JOB_ID");
    const std::uint64_t job = job_env != nullptr ? std::strtoull(job_env, nullptr, 16) : 0;

    // 1. A handshake from another job is refused with a reason.
    int fd = raw();
    auto hello = hello_frame(job ^ 1, 1);
    write_all(fd, hello.data(), hello.size());
    check(read_ack(fd) == hashi::wire::hello_status::wrong_job, "a handshake from another job is refused");
    ::close(fd);

    // 2. A proper handshake, then a frame of unknown type.
    fd = raw();
    hello = hello_frame(job, 2);
    write_all(fd, hello.data(), hello.size());
    check(read_ack(fd) == hashi::wire::hello_status::ok, "a handshake from this job is accepted");
    std::uint8_t junk[hashi::wire::header_size] = {99};
    write_all(fd, junk, sizeof junk);
    char c;
    check(::read(fd, &c, 1) == 0, "a frame of unknown type makes the endpoint close that connection");
    ::close(fd);

    // 3. A tagged frame claiming more payload than allowed.
    fd = raw();
    hello = hello_frame(job, 3);
    write_all(fd, hello.data(), hello.size());
    read_ack(fd);
    hashi::wire::frame_header big;
    big.type = hashi::wire::frame_type::tagged;
    big.seq = 1;
    big.length = ~0ULL;
    auto bh = hashi::wire::encode_header(big);
    write_all(fd, bh.data(), bh.size());
    check(::read(fd, &c, 1) == 0, "a frame with an absurd length makes the endpoint close that connection");
    ::close(fd);

    // 4. Half a frame, then the connection drops.
    fd = raw();
    hello = hello_frame(job, 4);
    write_all(fd, hello.data(), hello.size());
    read_ack(fd);
    hashi::wire::frame_header half;
    half.type = hashi::wire::frame_type::tagged;
    half.seq = 1;
    half.length = 1000;
    auto hh = hashi::wire::encode_header(half);
    write_all(fd, hh.data(), hh.size());
    write_all(fd, "only a bit", 10);
    ::close(fd);

    // 5. Random bytes instead of a handshake.
    fd = raw();
    std::uint8_t noise[300];
    for (std::size_t i = 0; i < sizeof noise; ++i)
        noise[i] = static_cast<std::uint8_t>(i * 37 + 11);
    write_all(fd, noise, sizeof noise);
    check(::read(fd, &c, 1) == 0, "bytes that are not a handshake make the endpoint close the connection");
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
    hashi::wire::job_key key {};
    const char* hex = std::getenv("HASHI_JOB_KEY");
    if (hex == nullptr || std::strlen(hex) != 64)
        die("liveness needs HASHI_JOB_KEY (64 hex digits)", -FI_EINVAL);
    for (std::size_t i = 0; i < key.size(); ++i)
        key[i] = static_cast<std::uint8_t>(std::stoul(std::string(hex + 2 * i, 2), nullptr, 16));
    pair_setup pipes;
    const pid_t child = ::fork();
    if (child == 0) {
        fabric_ep me;
        pipes.join_as_child(me);
        ::sleep(6); // computing, not in libfabric: only the liveness thread answers
        int one = 1;
        if (fi_tinject(me.ep, &one, sizeof one, 0, 1) != 0)
            std::_Exit(3);
        for (int i = 0; i < 1000; ++i)
            fi_cq_read(me.cq, nullptr, 0); // progress, so the message leaves
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
