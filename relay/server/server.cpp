// SPDX-License-Identifier: BSD-3-Clause
#include "relay/server/server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ifaddrs.h>
#include <iostream>
#include <net/if.h>
#include <netdb.h>
#include <stdexcept>

namespace hashi::impi {
namespace {

// Strangers' events get a log line each up to this many per window, then
// one summary line per window (log_limit.hpp): at most 2 lines a second.
constexpr std::size_t stranger_log_burst = 10;
constexpr auto stranger_log_window = std::chrono::seconds(10);
// Connections taken per wake-up of the listener: a flood is drained fast,
// and the clients' sockets are still served between batches.
constexpr int accepts_per_wakeup = 64;
// Startup commands one client may have queued before its round comes.
constexpr std::size_t max_pending_bytes = std::size_t {32} << 20;
constexpr std::size_t max_pending_frames = 256;

// The numeric address and port of a socket's peer (`peer`) or own end.
std::pair<std::string, std::string> address_of(int fd, bool peer)
{
    sockaddr_storage ss {};
    socklen_t len = sizeof ss;
    auto* sa = reinterpret_cast<sockaddr*>(&ss);
    if ((peer ? ::getpeername(fd, sa, &len) : ::getsockname(fd, sa, &len)) != 0) {
        return {"?", "?"};
    }
    char host[NI_MAXHOST];
    char port[NI_MAXSERV];
    if (::getnameinfo(sa, len, host, sizeof host, port, sizeof port, NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
        return {"?", "?"};
    }
    return {host, port};
}

std::string with_port(const std::string& host, const std::string& port)
{
    return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + port;
}

// The address to print when listening on all interfaces: the first IPv4
// address of an interface that is up and not loopback, as GridMPI prints a
// dotted address so no cluster depends on name resolution.
std::string primary_ipv4()
{
    ifaddrs* list = nullptr;
    std::string found = "127.0.0.1";
    if (::getifaddrs(&list) != 0) {
        return found;
    }
    for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
        if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET || (i->ifa_flags & IFF_UP) == 0 ||
            (i->ifa_flags & IFF_LOOPBACK) != 0) {
            continue;
        }
        char buf[INET_ADDRSTRLEN];
        ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, buf, sizeof buf);
        found = buf;
        break;
    }
    ::freeifaddrs(list);
    return found;
}

std::string text_of(const std::string& s)
{
    return s.substr(0, max_text);
}

ByteView view(const std::string& s)
{
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

} // namespace

Server::Server(ServerConfig cfg)
    : cfg_(std::move(cfg)),
      by_rank_(cfg_.nclients, nullptr),
      admission_(cfg_.admission),
      stranger_log_(stranger_log_burst, stranger_log_window)
{
}

Server::~Server() = default;

void Server::log(const std::string& line) const
{
    std::cerr << "impi-server: " << line << std::endl;
}

void Server::log_stranger(const std::string& kind, const std::string& line)
{
    if (stranger_log_.allow(kind, Clock::now())) {
        log(line);
    }
}

std::string Server::listen()
{
    addrinfo hints {};
    // All interfaces: IPv4 (the address printed is IPv4); a given address
    // may be IPv6 too.
    hints.ai_family = cfg_.host.empty() ? AF_INET : AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    addrinfo* list = nullptr;
    std::string port = std::to_string(cfg_.port);
    int rc = ::getaddrinfo(cfg_.host.empty() ? nullptr : cfg_.host.c_str(), port.c_str(), &hints, &list);
    if (rc != 0) {
        throw std::runtime_error("cannot resolve the listen address '" + cfg_.host + "': " + ::gai_strerror(rc));
    }
    // Non-blocking, so a flood is accepted in batches until the queue is
    // empty; a long queue, so real clients' SYNs are not dropped while a
    // flood fills it between two batches.
    listener_.reset(::socket(list->ai_family, list->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, list->ai_protocol));
    int one = 1;
    bool ok = listener_ && ::setsockopt(listener_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
        ::bind(listener_.get(), list->ai_addr, list->ai_addrlen) == 0 && ::listen(listener_.get(), SOMAXCONN) == 0;
    int err = errno;
    ::freeaddrinfo(list);
    if (!ok) {
        throw std::runtime_error("cannot listen on " + (cfg_.host.empty() ? std::string("*") : cfg_.host) + ":" + port +
            ": " + std::strerror(err) + (err == EADDRINUSE ? " (choose another -port)" : ""));
    }
    auto [bound, bound_port] = address_of(listener_.get(), false);
    bool wildcard = bound == "0.0.0.0" || bound == "::";
    return with_port(wildcard ? primary_ipv4() : bound, bound_port);
}

std::vector<Server::Client*> Server::members()
{
    std::vector<Client*> m;
    for (auto* c : by_rank_) {
        if (c != nullptr) {
            m.push_back(c);
        }
    }
    return m;
}

std::string Server::missing_clients() const
{
    std::string s;
    int n = 0;
    for (std::uint32_t k = 0; k < cfg_.nclients; ++k) {
        if (by_rank_[k] == nullptr) {
            s += (s.empty() ? "" : ", ") + std::to_string(k);
            ++n;
        }
    }
    return (n == 1 ? "client " : "clients ") + s;
}

// What a stranger is told never names the job, its clients or addresses:
// `why` says only what was wrong with its own messages.
void Server::reject(Client& c, const std::string& kind, const std::string& why)
{
    log_stranger(kind, "turned away " + c.channel.name() + ": " + why);
    send_to_stranger(c, cmd::hx_error, view(text_of(why)));
    c.channel.close();
}

// Strangers get no waiting: a peer that does not take a few bytes at once
// (its window closed) is not worth a blocked server.
bool Server::send_to_stranger(Client& c, std::uint32_t command, ByteView payload)
{
    std::string ignored;
    if (!c.channel.send(command, payload, ignored, std::chrono::milliseconds(0))) {
        c.channel.close();
        return false;
    }
    return true;
}

// Closed without a word: the stranger learns nothing, and a real mpiexec
// that was evicted sees its connection close and retries.
void Server::drop(const Admission::Eviction& e)
{
    for (auto& c : clients_) {
        if (c->id == e.id && c->channel.open()) {
            log_stranger(reason_text(e.reason), "closed " + c->channel.name() + ": " + reason_text(e.reason));
            c->channel.close();
        }
    }
}

void Server::fail_job(const std::string& why)
{
    if (result_) {
        return;
    }
    log("error: " + why + "; the job is aborted");
    for (auto& c : clients_) {
        // Only who proved it belongs to the job hears why (the reason
        // names clients and addresses); a stranger's connection just ends.
        bool told = c->rank >= 0 || c->relay || c->state == State::joining;
        if (c->channel.open() && told) {
            std::string e;
            c->channel.send(cmd::hx_error, view(text_of(why)), e, std::chrono::seconds(2));
        }
        c->channel.close();
    }
    result_ = 1;
}

void Server::accept_clients()
{
    for (int i = 0; i < accepts_per_wakeup; ++i) {
        int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                // The connection stays queued; the deadlines free
                // descriptors. Poll the listener again a little later
                // instead of spinning on it.
                log_stranger("not accepted",
                    std::string("cannot accept a connection now: ") + std::strerror(errno) +
                        " (raise ulimit -n, or lower -max-unauth)");
                listener_paused_until_ = Clock::now() + std::chrono::milliseconds(200);
            }
            return;
        }
        tune_socket(fd);
        auto [host, port] = address_of(fd, true);
        auto peer = with_port(host, port);
        auto c = std::make_unique<Client>(
            Channel(UniqueFd(fd), Sender::client, "connection from " + peer), peer, host, next_id_++);
        auto evicted = admission_.admit(c->id, host, Clock::now());
        clients_.push_back(std::move(c));
        for (const auto& e : evicted) {
            drop(e);
        }
    }
}

void Server::on_readable(Client& c)
{
    std::string error;
    auto st = c.channel.read_available(error);
    if (st != Channel::Status::ok) {
        if (c.rank < 0 && !c.relay) {
            if (cfg_.verbose) {
                log_stranger("went away", c.channel.name() + " went away before joining");
            }
            c.channel.close();
        } else if (c.state == State::finished) {
            c.channel.close();
        } else if (c.relay) {
            fail_job(c.channel.name() +
                (st == Channel::Status::closed ? " closed its connection" : " failed: " + error) +
                " before the job ended (the relay died, or its host or link is gone)");
        } else {
            fail_job(c.channel.name() +
                (st == Channel::Status::closed ? " closed its connection" : " failed: " + error) +
                (started_ ? " before FINI (its mpiexec ended without finishing)" : " during the startup"));
        }
        return;
    }
    while (c.channel.open() && !result_) {
        // Before AUTH, nothing but AUTH's few bytes is buffered: a stranger
        // announcing a large frame of another command is turned away on its
        // header, not after megabytes.
        if (auto next = c.channel.incoming_command();
            next && (c.state == State::auth_mask || c.state == State::auth_answer) && !auth_first(c, *next)) {
            return;
        }
        auto f = c.channel.next_frame(error);
        if (!error.empty()) {
            if (c.rank >= 0 || c.relay) {
                fail_job(c.channel.name() + " sent a malformed message: " + error);
            } else {
                reject(c, "malformed", "malformed message: " + error);
            }
            return;
        }
        if (!f) {
            return;
        }
        on_frame(c, std::move(*f));
    }
}

void Server::on_frame(Client& c, Frame f)
{
    switch (c.state) {
    case State::auth_mask:
    case State::auth_answer:
        on_auth(c, f);
        return;
    case State::joining:
        if (f.command == cmd::hx_relay_join) {
            on_relay_join(c, f);
        } else {
            on_join(c, f);
        }
        return;
    case State::relay:
        on_relay(c, f);
        return;
    case State::startup:
        if (f.command != cmd::coll && f.command != cmd::done) {
            fail_job(
                c.channel.name() + " sent " + command_name(f.command) + " during the startup (COLL or DONE expected)");
            return;
        }
        c.pending_bytes += f.payload.size();
        c.pending.push_back(std::move(f));
        if (c.pending.size() > max_pending_frames || c.pending_bytes > max_pending_bytes) {
            fail_job(c.channel.name() + " sent more startup data than any job needs");
            return;
        }
        run_startup_rounds();
        return;
    case State::running:
        on_running(c, f);
        return;
    case State::finished:
        fail_job(c.channel.name() + " sent " + command_name(f.command) + " after FINI");
        return;
    }
}

bool Server::auth_first(Client& c, std::uint32_t command)
{
    if (command != cmd::auth) {
        reject(c, "out of order", "sent " + command_name(command) + " before authenticating (AUTH comes first)");
        return false;
    }
    return true;
}

void Server::on_auth(Client& c, const Frame& f)
{
    if (!auth_first(c, f.command)) {
        return;
    }
    const auto& creds = cfg_.credentials;
    Reader in(f.payload);
    if (c.state == State::auth_mask) {
        auto mask = in.u32();
        if (!mask || !in.at_end()) {
            reject(c, "malformed",
                "malformed AUTH: expected a 4-byte method mask, got " + std::to_string(f.payload.size()) + " bytes");
            return;
        }
        auto method = choose_method(*mask, creds);
        if (!method) {
            reject(c, "no common method",
                "no common authentication method: the server accepts " + describe_mask(creds.mask()) +
                    ", the client offers " + describe_mask(*mask));
            return;
        }
        c.method = *method;
        ServerAuth answer {.which = *method, .data = {}};
        if (*method == auth_method::hashi_hmac) {
            c.server_nonce = random_nonce();
            answer.data.assign(c.server_nonce.begin(), c.server_nonce.end());
        }
        if (!send_to_stranger(c, cmd::auth, encode_server_auth(answer))) {
            return;
        }
        if (*method == auth_method::none) {
            log_stranger("unauthenticated (IMPI_AUTH_NONE)",
                "warning: " + c.channel.name() + " joins without authentication (IMPI_AUTH_NONE)");
            c.state = State::joining;
        } else {
            c.state = State::auth_answer;
        }
        return;
    }
    if (c.method == auth_method::key) {
        auto key = in.u64();
        if (!key || !in.at_end()) {
            reject(c, "malformed", "malformed AUTH: expected an 8-byte IMPI key");
            return;
        }
        Writer got;
        Writer want;
        got.u64(*key);
        want.u64(*creds.key);
        if (!same_mac(got.take(), want.take())) {
            reject(c, "authentication failed",
                "authentication failed: wrong IMPI key (IMPI_AUTH_KEY differs from the server's)");
            return;
        }
    } else {
        auto client_nonce = in.take(nonce_size);
        auto mac = client_nonce ? in.take(mac_size) : std::nullopt;
        if (!mac || !in.at_end()) {
            reject(c, "malformed", "malformed AUTH: expected a 32-byte nonce and a 32-byte proof");
            return;
        }
        Nonce cn {};
        std::copy(client_nonce->begin(), client_nonce->end(), cn.begin());
        if (!same_mac(*mac, client_proof(*creds.secret, c.server_nonce, cn))) {
            reject(c, "authentication failed",
                "authentication failed: the client does not hold the job's secret (wrong secret?)");
            return;
        }
        auto proof = server_proof(*creds.secret, c.server_nonce, cn);
        c.channel.send(
            cmd::auth, encode_server_auth({.which = auth_method::hashi_hmac, .data = {proof.begin(), proof.end()}}));
    }
    // It proved it holds the key or the secret: no flood may evict it now.
    admission_.authenticated(c.id);
    c.state = State::joining;
}

void Server::on_join(Client& c, const Frame& f)
{
    Reader in(f.payload);
    auto rank = f.command == cmd::impi ? in.i32() : std::nullopt;
    if (!rank) {
        fail_job(c.channel.name() + " sent " + command_name(f.command) + " where IMPI with its client rank belongs");
        return;
    }
    if (*rank < 0 || static_cast<std::uint32_t>(*rank) >= cfg_.nclients) {
        fail_job(c.channel.name() + " asked for client rank " + std::to_string(*rank) + ", but the job has " +
            std::to_string(cfg_.nclients) + " clients (0.." + std::to_string(cfg_.nclients - 1) + ")");
        return;
    }
    if (Client* other = by_rank_[static_cast<std::size_t>(*rank)]; other != nullptr) {
        fail_job("client rank " + std::to_string(*rank) + " was claimed twice: by " + other->channel.name() +
            " and by " + c.channel.name() + "; give each cluster its own -client rank");
        return;
    }
    c.rank = *rank;
    c.state = State::startup;
    admission_.remove(c.id);
    by_rank_[static_cast<std::size_t>(c.rank)] = &c;
    c.channel.rename("client " + std::to_string(c.rank) + " (" + c.peer + ")");
    if (cfg_.verbose) {
        log(c.channel.name() + " joined (" + method_name(c.method) + ")");
    }
    auto all = members();
    if (all.size() == cfg_.nclients) {
        auto size = Writer().i32(static_cast<std::int32_t>(cfg_.nclients)).take();
        for (Client* m : all) {
            m->channel.send(cmd::impi, size);
        }
        run_startup_rounds();
    }
}

// An impi-relay joins like a client (it proved it holds the secret) but
// serves a cluster instead of being one: it does not count towards -server
// N, gets the relay table when the startup completes, and must stay until
// the job ends.
void Server::on_relay_join(Client& c, const Frame& f)
{
    std::string error;
    auto r = decode_relay_info(f.payload, error);
    if (!r) {
        fail_job(c.channel.name() + " sent a malformed HXRJ: " + error);
        return;
    }
    if (started_) {
        fail_job(describe(*r) + " joined after the startup completed; start the relays before mpiexec");
        return;
    }
    if (static_cast<std::uint32_t>(r->cluster) >= cfg_.nclients) {
        fail_job(describe(*r) + " serves cluster " + std::to_string(r->cluster) + ", but the job has " +
            std::to_string(cfg_.nclients) + " clusters (0.." + std::to_string(cfg_.nclients - 1) + ")");
        return;
    }
    for (const Client* o : relays_) {
        if (o->relay->cluster != r->cluster) {
            continue;
        }
        if (o->relay->id == r->id) {
            fail_job("relay " + std::to_string(r->id) + " of cluster " + std::to_string(r->cluster) +
                " was claimed twice: by " + o->channel.name() + " and by " + c.channel.name());
            return;
        }
        if (o->relay->count != r->count) {
            fail_job("the relays of cluster " + std::to_string(r->cluster) + " disagree on how many they are (" +
                std::to_string(o->relay->count) + " and " + std::to_string(r->count) + "); give each the same --relays");
            return;
        }
    }
    c.relay = *r;
    c.state = State::relay;
    admission_.remove(c.id);
    relays_.push_back(&c);
    c.channel.rename(describe(*r));
    if (cfg_.verbose) {
        log(c.channel.name() + " joined");
    }
    run_startup_rounds();
}

void Server::on_relay(Client& c, const Frame& f)
{
    if (f.command == cmd::hx_abort) {
        auto a = decode_abort(f.payload);
        fail_job(c.channel.name() + " failed: " + (a ? a->reason : std::string("(malformed HXAB)")));
        return;
    }
    fail_job(c.channel.name() + " sent " + command_name(f.command) + ", which a relay never sends");
}

bool Server::relays_complete() const
{
    for (const Client* r : relays_) {
        int have = 0;
        for (const Client* o : relays_) {
            have += o->relay->cluster == r->relay->cluster ? 1 : 0;
        }
        if (have != r->relay->count) {
            return false;
        }
    }
    return true;
}

std::string Server::missing_relays() const
{
    std::string s;
    for (std::uint32_t k = 0; k < cfg_.nclients; ++k) {
        std::vector<bool> have;
        for (const Client* r : relays_) {
            if (static_cast<std::uint32_t>(r->relay->cluster) == k) {
                have.resize(static_cast<std::size_t>(r->relay->count));
                have[static_cast<std::size_t>(r->relay->id)] = true;
            }
        }
        for (std::size_t i = 0; i < have.size(); ++i) {
            if (!have[i]) {
                s += (s.empty() ? "" : ", ") + ("relay " + std::to_string(i) + " of cluster " + std::to_string(k));
            }
        }
    }
    return s.empty() ? "no relay" : s;
}

void Server::send_relay_tables()
{
    if (relays_.empty()) {
        return;
    }
    RelayTable t {.job_id = job_id_, .relays = {}};
    for (const Client* r : relays_) {
        t.relays.push_back(*r->relay);
    }
    std::sort(t.relays.begin(), t.relays.end(),
        [](const RelayInfo& a, const RelayInfo& b) { return std::pair(a.cluster, a.id) < std::pair(b.cluster, b.id); });
    auto payload = encode_relay_table(t);
    for (Client* r : relays_) {
        std::string e;
        if (!r->channel.send(cmd::hx_relay_table, payload, e)) {
            fail_job("cannot send the relay table to " + r->channel.name() + ": " + e);
            return;
        }
    }
}

void Server::run_startup_rounds()
{
    auto all = members();
    if (all.size() != cfg_.nclients) {
        return;
    }
    while (!started_ && !result_) {
        for (Client* m : all) {
            if (m->pending.empty()) {
                return;
            }
        }
        // Every client has its next command: all DONE ends the startup,
        // otherwise the smallest label is the round, and clients without
        // it keep their command for a later round (IMPI's client_mask).
        std::optional<std::uint32_t> round;
        for (Client* m : all) {
            if (m->pending.front().command == cmd::coll) {
                auto in = decode_coll_in(m->pending.front().payload);
                if (!in) {
                    fail_job(m->channel.name() + " sent a malformed COLL (shorter than its label)");
                    return;
                }
                round = round ? std::min(*round, in->label) : in->label;
            }
        }
        if (!round) {
            if (!relays_complete()) {
                return; // on_relay_join runs the rounds again
            }
            started_ = true;
            std::uint64_t id = 0;
            while (id == 0) {
                auto n = random_nonce();
                id = *Reader(n).u64();
            }
            job_id_ = id;
            auto job = Writer().u64(job_id_).take();
            // The relays learn each other before any rank can start, so a
            // rank's first route finds its relay ready to open it.
            send_relay_tables();
            for (Client* m : all) {
                m->pending.clear();
                m->state = State::running;
                m->channel.send(cmd::done, {});
                if (m->hashi) {
                    std::vector<RelayAddress> mine;
                    for (const Client* r : relays_) {
                        if (r->relay->cluster == m->rank) {
                            mine.resize(static_cast<std::size_t>(r->relay->count));
                            mine[static_cast<std::size_t>(r->relay->id)] = {r->relay->lan_ipv4, r->relay->lan_port};
                        }
                    }
                    if (!mine.empty()) {
                        m->channel.send(cmd::hx_relays, encode_relay_list(mine));
                    }
                    m->channel.send(cmd::hx_job, job);
                }
            }
            listener_.reset(); // the job is complete; nobody else may join
            for (auto& s : clients_) {
                if (s->rank < 0 && !s->relay) {
                    s->channel.close(); // strangers still connected never will
                }
            }
            if (cfg_.verbose) {
                log("startup complete: " + std::to_string(cfg_.nclients) + " clients");
            }
            return;
        }
        CollOut out {.label = *round, .client_mask = 0, .data = {}};
        for (Client* m : all) {
            auto& front = m->pending.front();
            if (front.command != cmd::coll) {
                continue;
            }
            auto in = decode_coll_in(front.payload);
            if (in->label != *round) {
                continue;
            }
            if (auto e = check_contribution(in->label, in->data, m->shape); !e.empty()) {
                fail_job(m->channel.name() + " sent a malformed COLL: " + e);
                return;
            }
            if (in->label == label::hashi_ext) {
                m->hashi = true;
            }
            out.client_mask |= 1u << m->rank;
            out.data.insert(out.data.end(), in->data.begin(), in->data.end());
            m->pending_bytes -= front.payload.size();
            m->pending.pop_front();
        }
        auto payload = encode_coll_out(out);
        for (Client* m : all) {
            m->channel.send(cmd::coll, payload);
        }
    }
}

void Server::on_running(Client& c, const Frame& f)
{
    if (f.command == cmd::fini) {
        c.state = State::finished;
        if (cfg_.verbose) {
            log(c.channel.name() + " finished");
        }
        auto all = members();
        if (std::all_of(all.begin(), all.end(), [](Client* m) { return m->state == State::finished; })) {
            for (Client* r : relays_) {
                std::string e;
                r->channel.send(cmd::fini, {}, e, std::chrono::seconds(2));
            }
            result_ = 0;
            return;
        }
        finish_barrier_if_complete();
        return;
    }
    if (!c.hashi || (f.command != cmd::hx_barrier_in && f.command != cmd::hx_abort)) {
        fail_job(c.channel.name() + " sent " + command_name(f.command) + " while the job runs");
        return;
    }
    if (f.command == cmd::hx_abort) {
        auto a = decode_abort(f.payload);
        if (!a) {
            fail_job(c.channel.name() + " sent a malformed HXAB");
            return;
        }
        a->client = c.rank; // a client speaks only for itself
        log("client " + std::to_string(c.rank) + " aborted the job: " + a->reason);
        auto payload = encode_abort(*a);
        for (Client* m : members()) {
            if (m != &c && m->channel.open() && m->hashi) {
                std::string e;
                m->channel.send(cmd::hx_abort, payload, e, std::chrono::seconds(2));
            }
            m->channel.close();
        }
        for (Client* r : relays_) {
            std::string e;
            r->channel.send(cmd::hx_abort, payload, e, std::chrono::seconds(2));
            r->channel.close();
        }
        result_ = 1;
        return;
    }
    auto b = decode_barrier(f.payload);
    if (!b) {
        fail_job(c.channel.name() + " sent a malformed HXBI (bad key/value list)");
        return;
    }
    if (c.barrier) {
        fail_job(c.channel.name() + " entered PMI barrier " + std::to_string(b->epoch) + " before barrier " +
            std::to_string(c.barrier->epoch) + " ended");
        return;
    }
    if (b->epoch != barrier_epoch_) {
        fail_job(c.channel.name() + " is at PMI barrier " + std::to_string(b->epoch) + ", the job at barrier " +
            std::to_string(barrier_epoch_) + " (do all clusters run the same program?)");
        return;
    }
    c.barrier = std::move(*b);
    finish_barrier_if_complete();
}

void Server::finish_barrier_if_complete()
{
    auto all = members();
    std::vector<Client*> part;
    std::string finished;
    bool waiting = false;
    for (Client* m : all) {
        if (!m->hashi) {
            continue;
        }
        if (m->state == State::finished) {
            finished += (finished.empty() ? "" : ", ") + std::to_string(m->rank);
        } else {
            part.push_back(m);
            waiting = waiting || m->barrier.has_value();
        }
    }
    if (!waiting) {
        return;
    }
    if (!finished.empty()) {
        fail_job("PMI barrier " + std::to_string(barrier_epoch_) + " cannot complete: client(s) " + finished +
            " already finished");
        return;
    }
    if (!std::all_of(part.begin(), part.end(), [](Client* m) { return m->barrier.has_value(); })) {
        return;
    }
    Barrier out {.epoch = barrier_epoch_, .entries = {}};
    for (Client* m : part) {
        for (auto& e : m->barrier->entries) {
            out.entries.push_back(std::move(e));
        }
        m->barrier.reset();
    }
    auto payload = encode_barrier(out);
    if (payload.size() > max_barrier_out) {
        fail_job("the job's PMI keys of barrier " + std::to_string(barrier_epoch_) + " exceed " +
            std::to_string(max_barrier_out >> 20) + " MiB");
        return;
    }
    ++barrier_epoch_;
    for (Client* m : part) {
        std::string e;
        if (!m->channel.send(cmd::hx_barrier_out, payload, e)) {
            fail_job("cannot send the barrier's keys to " + m->channel.name() + ": " + e);
            return;
        }
    }
}

void Server::check_deadlines()
{
    auto now = Clock::now();
    for (const auto& e : admission_.expired(now)) {
        drop(e);
    }
    if (auto summary = stranger_log_.summary(now)) {
        log(*summary);
    }
    if (started_ || now < startup_deadline_) {
        return;
    }
    auto secs = std::to_string(cfg_.startup_timeout.count());
    if (members().size() == cfg_.nclients && !relays_complete()) {
        fail_job(missing_relays() + " did not join within " + secs + " s; start every impi-relay of a cluster " +
            "(-relay 0 .. --relays N-1) before its mpiexec, or give impi-server a longer -timeout");
        return;
    }
    if (members().size() < cfg_.nclients) {
        auto missing = missing_clients();
        fail_job(missing + " did not join within " + secs + " s; start mpiexec -client with that rank in its " +
            "cluster, or give impi-server a longer -timeout");
    } else {
        std::string slow;
        for (Client* m : members()) {
            bool done = !m->pending.empty() && m->pending.back().command == cmd::done;
            if (!done) {
                slow += (slow.empty() ? "" : ", ") + std::to_string(m->rank);
            }
        }
        fail_job("client(s) " + slow + " did not finish the startup (no DONE) within " + secs + " s");
    }
}

int Server::run(int stop_fd)
{
    startup_deadline_ = Clock::now() + cfg_.startup_timeout;
    while (!result_) {
        std::vector<pollfd> fds;
        std::vector<Client*> of_fd;
        fds.push_back({stop_fd, POLLIN, 0});
        of_fd.push_back(nullptr);
        if (listener_ && Clock::now() >= listener_paused_until_) {
            fds.push_back({listener_.get(), POLLIN, 0});
            of_fd.push_back(nullptr);
        }
        for (auto& c : clients_) {
            if (c->channel.open()) {
                fds.push_back({c->channel.fd(), POLLIN, 0});
                of_fd.push_back(c.get());
            }
        }
        int n = ::poll(fds.data(), fds.size(), 200);
        if (n < 0 && errno != EINTR) {
            fail_job(std::string("poll failed: ") + std::strerror(errno));
            break;
        }
        if (n > 0) {
            if ((fds[0].revents & POLLIN) != 0) {
                fail_job("impi-server was stopped by a signal");
                break;
            }
            for (std::size_t i = 1; i < fds.size() && !result_; ++i) {
                if (fds[i].revents == 0) {
                    continue;
                }
                if (of_fd[i] == nullptr) {
                    if (listener_ && fds[i].fd == listener_.get()) {
                        accept_clients();
                    }
                } else if (of_fd[i]->channel.open()) {
                    on_readable(*of_fd[i]);
                }
            }
        }
        if (!result_) {
            check_deadlines();
        }
        // Strangers that were turned away or left are forgotten; members
        // stay (by_rank_ points at them) until the end.
        std::erase_if(clients_, [this](const auto& c) {
            bool gone = c->rank < 0 && !c->relay && !c->channel.open();
            if (gone) {
                admission_.remove(c->id);
            }
            return gone;
        });
    }
    if (auto summary = stranger_log_.summary(Clock::now(), true)) {
        log(*summary);
    }
    if (*result_ == 0 && cfg_.verbose) {
        log("every client sent FINI; the job is over");
    }
    return *result_;
}

} // namespace hashi::impi
