// SPDX-License-Identifier: BSD-3-Clause
#include "impi_client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <random>

namespace hashi::mpiexec {

using namespace hashi::impi;

namespace {

std::string text_of(const Frame& f)
{
    return decode_text(f.payload).value_or("(unreadable reason)");
}

// The server closed or reset the connection before the startup completed,
// without saying why (HXER). That is what impi-server does to connections
// its admission policy evicts or that missed its deadline (a flood of
// strangers, a slow start), so the startup is worth another connection.
// A verdict with a reason (wrong secret, the job failed) is not retried.
class ClosedEarly : public ImpiError {
public:
    using ImpiError::ImpiError;
};

// Between attempts: 100 ms, doubling up to 2 s, each with up to 50%
// jitter so the clusters' retries do not fall into step with a flood.
constexpr auto first_backoff = std::chrono::milliseconds(100);
constexpr auto last_backoff = std::chrono::milliseconds(2000);

std::chrono::milliseconds jittered(std::chrono::milliseconds base)
{
    static std::minstd_rand rng {std::random_device {}()};
    std::uniform_int_distribution<long> extra(0, base.count() / 2);
    return base + std::chrono::milliseconds(extra(rng));
}

// Waits `pause` (not past `deadline`) unless `interrupt_fd` becomes readable.
bool wait_unless_interrupted(std::chrono::milliseconds pause, Clock::time_point deadline, int interrupt_fd)
{
    auto until = std::min(Clock::now() + pause, deadline);
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
        if (left <= 0) {
            return true;
        }
        pollfd pfd {interrupt_fd, POLLIN, 0};
        int n = ::poll(&pfd, interrupt_fd >= 0 ? 1 : 0, static_cast<int>(left));
        if (n > 0) {
            return false;
        }
    }
}

} // namespace

Ipv6 local_address_of(int fd)
{
    sockaddr_storage ss {};
    socklen_t len = sizeof ss;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0) {
        if (ss.ss_family == AF_INET) {
            return ipv4_mapped(ntohl(reinterpret_cast<sockaddr_in*>(&ss)->sin_addr.s_addr));
        }
        if (ss.ss_family == AF_INET6) {
            Ipv6 a {};
            const auto* b = reinterpret_cast<sockaddr_in6*>(&ss)->sin6_addr.s6_addr;
            std::copy(b, b + 16, a.begin());
            return a;
        }
    }
    return ipv4_mapped(0x7f000001);
}

ImpiClient::ImpiClient(ImpiSettings settings) : settings_(std::move(settings))
{
}

std::string ImpiClient::refused(const Frame& f) const
{
    return "impi-server at " + settings_.server + " says: " + text_of(f);
}

Frame ImpiClient::expect(std::uint32_t command, const char* step, Clock::time_point deadline, int interrupt_fd)
{
    return expect_one_of({command}, step, deadline, interrupt_fd);
}

Frame ImpiClient::expect_one_of(
    std::initializer_list<std::uint32_t> commands, const char* step, Clock::time_point deadline, int interrupt_fd)
{
    const std::uint32_t command = *commands.begin(); // the one named in a complaint
    auto r = channel_->receive(deadline, interrupt_fd);
    auto where = std::string(" (") + step + ")";
    switch (r.status) {
    case Channel::Received::Status::frame:
        break;
    case Channel::Received::Status::timeout:
        throw ImpiError("impi-server at " + settings_.server + " did not complete the startup within " +
            std::to_string(settings_.timeout.count()) + " s" + where +
            "; are the other clusters' mpiexec -client started? (raise -impi-timeout to wait longer)");
    case Channel::Received::Status::closed:
        throw ClosedEarly("impi-server at " + settings_.server + " closed the connection during the startup" + where +
            "; no rank was started");
    case Channel::Received::Status::error:
        throw ClosedEarly("the connection to impi-server at " + settings_.server + " failed during the startup" +
            where + ": " + r.error + "; no rank was started");
    case Channel::Received::Status::interrupted:
        throw ImpiInterrupted("interrupted by a signal while joining impi-server at " + settings_.server + where);
    }
    if (r.frame.command == cmd::hx_error) {
        throw ImpiError(refused(r.frame));
    }
    if (std::find(commands.begin(), commands.end(), r.frame.command) == commands.end()) {
        throw ImpiError("impi-server at " + settings_.server + " sent " + command_name(r.frame.command) + " where " +
            command_name(command) + " belongs" + where + "; is it an IMPI server?");
    }
    return std::move(r.frame);
}

void ImpiClient::authenticate(Clock::time_point deadline, int interrupt_fd)
{
    const auto& creds = settings_.credentials;
    channel_->send(cmd::auth, Writer().u32(creds.mask()).take());
    auto answer = decode_server_auth(expect(cmd::auth, "AUTH", deadline, interrupt_fd).payload);
    if (!answer) {
        throw ImpiError("impi-server at " + settings_.server + " sent a malformed AUTH answer");
    }
    if (answer->which < 0 || answer->which >= 32 || (creds.mask() & (1u << answer->which)) == 0) {
        throw ImpiError("impi-server at " + settings_.server + " chose " + method_name(answer->which) +
            ", which this mpiexec did not offer (" + describe_mask(creds.mask()) + ")");
    }
    if (answer->which == auth_method::key) {
        channel_->send(cmd::auth, Writer().u64(*creds.key).take());
    } else if (answer->which == auth_method::hashi_hmac) {
        if (answer->data.size() != nonce_size) {
            throw ImpiError("impi-server at " + settings_.server + " sent a challenge of the wrong size");
        }
        Nonce server_nonce {};
        std::copy(answer->data.begin(), answer->data.end(), server_nonce.begin());
        auto client_nonce = random_nonce();
        auto proof = client_proof(*creds.secret, server_nonce, client_nonce);
        channel_->send(cmd::auth, Writer().bytes(client_nonce).bytes(proof).take());
        auto reply = decode_server_auth(expect(cmd::auth, "AUTH proof", deadline, interrupt_fd).payload);
        // The server proves it holds the secret too, so a rogue server
        // cannot collect the job's business cards.
        if (!reply || !same_mac(reply->data, server_proof(*creds.secret, server_nonce, client_nonce))) {
            throw ImpiError("impi-server at " + settings_.server +
                " could not prove it holds the job's secret; is it the right server, with the same secret?");
        }
    }
}

FederatedJob ImpiClient::join(const LocalClient& local, int interrupt_fd)
{
    auto deadline = Clock::now() + settings_.timeout;
    auto backoff = first_backoff;
    bool told = false;
    std::string closed; // why the previous connection ended
    for (bool reconnecting = false;; reconnecting = true) {
        try {
            return join_once(local, interrupt_fd, deadline, reconnecting);
        } catch (const ClosedEarly& e) {
            channel_.reset();
            closed = e.what();
            if (Clock::now() + backoff >= deadline) {
                throw ImpiError(std::string(e.what()) + "; retried until the -impi-timeout of " +
                    std::to_string(settings_.timeout.count()) + " s was over");
            }
            if (!told) {
                std::cerr << "mpiexec: " << e.what() << "; connecting again until the -impi-timeout of "
                          << settings_.timeout.count() << " s is over" << std::endl;
                told = true;
            }
            if (!wait_unless_interrupted(jittered(backoff), deadline, interrupt_fd)) {
                throw ImpiInterrupted(
                    "interrupted by a signal while waiting to join impi-server at " + settings_.server + " again");
            }
            backoff = std::min(backoff * 2, last_backoff);
        } catch (const ConnectRefused&) {
            // It answered before and refuses now: its listener is gone, so
            // it ended (or completed the startup without this cluster).
            throw ImpiError(closed + "; connecting again was refused: impi-server is no longer running or takes no " +
                "more clients (see its output)");
        }
    }
}

FederatedJob ImpiClient::join_once(
    const LocalClient& local, int interrupt_fd, Clock::time_point deadline, bool reconnecting)
{
    channel_ =
        std::make_unique<Channel>(connect_to(settings_.server, deadline, !reconnecting), Sender::server, "impi-server");
    authenticate(deadline, interrupt_fd);

    // Everything else is pipelined: IMPI, every label, DONE; the server
    // answers once all clients are there.
    LocalClient me = local;
    Ipv6 own = local_address_of(channel_->fd());
    std::fill(me.host_addr.begin(), me.host_addr.end(), own);
    channel_->send(cmd::impi, Writer().i32(settings_.client).take());
    for (const auto& c : contributions(me)) {
        channel_->send(cmd::coll, encode_coll_in(c));
    }
    channel_->send(cmd::done, {});

    auto size = Reader(expect(cmd::impi, "waiting for every client to join", deadline, interrupt_fd).payload).i32();
    if (!size || *size <= settings_.client || *size > static_cast<int>(max_clients)) {
        throw ImpiError("impi-server at " + settings_.server + " announced a job of " +
            (size ? std::to_string(*size) : std::string("?")) + " clients, which does not fit client rank " +
            std::to_string(settings_.client));
    }
    std::map<std::uint32_t, CollOut> replies;
    for (;;) {
        auto r = channel_->receive(deadline, interrupt_fd);
        if (r.status == Channel::Received::Status::frame && r.frame.command == cmd::coll) {
            auto out = decode_coll_out(r.frame.payload);
            if (!out) {
                throw ImpiError("impi-server at " + settings_.server + " sent a malformed COLL answer");
            }
            replies[out->label] = std::move(*out);
            continue;
        }
        if (r.status == Channel::Received::Status::frame && r.frame.command == cmd::done) {
            break;
        }
        if (r.status == Channel::Received::Status::frame && r.frame.command == cmd::hx_error) {
            throw ImpiError(refused(r.frame));
        }
        if (r.status == Channel::Received::Status::frame) {
            throw ImpiError("impi-server at " + settings_.server + " sent " + command_name(r.frame.command) +
                " during the COLL exchange");
        }
        if (r.status == Channel::Received::Status::interrupted) {
            throw ImpiInterrupted("interrupted by a signal during the startup");
        }
        if (r.status == Channel::Received::Status::timeout) {
            throw ImpiError("the other clusters did not finish the startup within " +
                std::to_string(settings_.timeout.count()) + " s");
        }
        throw ClosedEarly("impi-server at " + settings_.server + " went away during the startup" +
            (r.error.empty() ? "" : " (" + r.error + ")") + "; no rank was started");
    }
    // A cluster served by impi-relays hears where they are (HXRL) before
    // the job id; others get the job id at once.
    std::vector<RelayAddress> relays;
    auto job_frame = expect_one_of({cmd::hx_relays, cmd::hx_job}, "job id", deadline, interrupt_fd);
    if (job_frame.command == cmd::hx_relays) {
        std::string bad;
        auto list = decode_relay_list(job_frame.payload, bad);
        if (!list) {
            throw ImpiError("impi-server at " + settings_.server + " sent a malformed relay list: " + bad);
        }
        relays = std::move(*list);
        job_frame = expect(cmd::hx_job, "job id", deadline, interrupt_fd);
    }
    auto job = Reader(job_frame.payload).u64();
    std::string error;
    auto fed = negotiate(replies, static_cast<std::uint32_t>(*size), error);
    if (!job || !fed) {
        throw ImpiError("the clusters cannot form one job: " + (job ? error : std::string("malformed job id")));
    }
    for (std::size_t k = 0; k < fed->clients.size(); ++k) {
        if (!fed->clients[k].hashi) {
            throw ImpiError("client " + std::to_string(k) +
                " is not a Hashi mpiexec (no PMI extension); every cluster must run Hashi");
        }
    }
    if (fed->clients[static_cast<std::size_t>(settings_.client)].nprocs != local.host_of_proc.size()) {
        throw ImpiError("impi-server's tables disagree with this cluster's own process count");
    }

    FederatedJob out;
    out.nclients = *size;
    out.global_size = static_cast<int>(fed->total_procs());
    out.rank_offset = static_cast<int>(fed->rank_offset(static_cast<std::size_t>(settings_.client)));
    out.job_id = *job;
    out.relays = std::move(relays);
    for (std::size_t k = 0; k < fed->clients.size(); ++k) {
        auto base = static_cast<int>(fed->host_offset(k));
        for (int h : fed->clients[k].host_of_proc) {
            out.node_of_rank.push_back(base + h);
        }
    }
    return out;
}

std::vector<ImpiClient::Event> ImpiClient::on_readable()
{
    std::vector<Event> events;
    if (!open()) {
        return events;
    }
    auto lost = [&](const std::string& why) {
        events.push_back({Event::Kind::failed, {}, 1,
            "lost the connection to impi-server at " + settings_.server + " (" + why +
                "); the job cannot go on without it"});
        channel_->close();
    };
    // Two errors: a failed read (the connection timed out, was reset) is
    // not a malformed message, and the frames read before it still count.
    std::string read_error;
    auto st = channel_->read_available(read_error);
    std::string error;
    for (;;) {
        auto f = channel_->next_frame(error);
        if (!error.empty()) {
            lost("malformed message: " + error);
            return events;
        }
        if (!f) {
            break;
        }
        if (f->command == cmd::hx_barrier_out) {
            auto b = decode_barrier(f->payload);
            if (!b || b->epoch + 1 != barrier_epoch_) {
                lost(b ? "barrier " + std::to_string(b->epoch) + " ended out of turn" : "malformed HXBO");
                return events;
            }
            Event e {Event::Kind::barrier_out, {}, 0, {}};
            for (auto& kv : b->entries) {
                e.entries.emplace_back(std::move(kv.key), std::move(kv.value));
            }
            events.push_back(std::move(e));
        } else if (f->command == cmd::hx_abort) {
            auto a = decode_abort(f->payload);
            events.push_back({Event::Kind::aborted, {}, a ? std::max(1, a->code) : 1,
                a ? "cluster " + std::to_string(a->client) + " failed: " + a->reason : "another cluster failed"});
            channel_->close();
            return events;
        } else if (f->command == cmd::hx_error) {
            events.push_back({Event::Kind::failed, {}, 1, refused(*f)});
            channel_->close();
            return events;
        } else {
            lost("unexpected " + command_name(f->command));
            return events;
        }
    }
    if (st == Channel::Status::closed) {
        lost("it closed the connection");
    } else if (st == Channel::Status::error) {
        lost(read_error);
    }
    return events;
}

bool ImpiClient::send_barrier(const std::vector<KeyValue>& entries, std::string& error)
{
    Barrier b {.epoch = barrier_epoch_, .entries = {}};
    b.entries.reserve(entries.size());
    for (const auto& [k, v] : entries) {
        b.entries.push_back({k, v});
    }
    auto payload = encode_barrier(b);
    if (payload.size() > max_barrier_in) {
        error = "this cluster's PMI keys for one barrier exceed " + std::to_string(max_barrier_in >> 20) + " MiB";
        return false;
    }
    ++barrier_epoch_;
    if (!channel_->send(cmd::hx_barrier_in, payload, error)) {
        error = "cannot send the barrier to impi-server at " + settings_.server + ": " + error;
        return false;
    }
    return true;
}

void ImpiClient::send_abort(int code, const std::string& reason)
{
    if (!open()) {
        return;
    }
    // The reason ends up on other clusters' terminals: printable only.
    std::string text = reason.substr(0, max_text);
    std::replace_if(
        text.begin(), text.end(), [](char c) { return c < 0x20 || c > 0x7e; }, '?');
    std::string ignored;
    channel_->send(cmd::hx_abort, encode_abort({settings_.client, code, text}), ignored, std::chrono::seconds(2));
    channel_->close();
}

void ImpiClient::send_fini()
{
    if (!open()) {
        return;
    }
    std::string ignored;
    channel_->send(cmd::fini, {}, ignored, std::chrono::seconds(5));
    channel_->close();
}

} // namespace hashi::mpiexec
