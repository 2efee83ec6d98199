// SPDX-License-Identifier: BSD-3-Clause
// impi-server's engine: accepts the clients of one job, authenticates them,
// runs the IMPI startup (IMPI, COLL rounds, DONE), then, for clients that
// announced Hashi's extension, the job-long PMI barriers until every client
// sent FINI. One thread, one poll loop. Any violation by a client that has
// joined fails the whole job: every client is told why (HXER) and the
// server exits non-zero, so no cluster waits for a peer that will never
// come. A stranger that fails to authenticate is only turned away, and
// what strangers can make the server hold is bounded (admission.hpp).
#pragma once

#include "relay/impi/auth.hpp"
#include "relay/impi/channel.hpp"
#include "relay/impi/relay_tables.hpp"
#include "relay/impi/startup_tables.hpp"
#include "relay/server/admission.hpp"
#include "relay/server/log_limit.hpp"

#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hashi::impi {

struct ServerConfig {
    std::uint32_t nclients = 1;
    std::string host; // address to listen on; empty: all IPv4 addresses
    std::uint16_t port = 0; // 0: any free port
    std::chrono::seconds startup_timeout {60}; // every client joined and sent DONE by then
    Credentials credentials;
    AdmissionLimits admission; // what connections that have not joined may hold
    bool verbose = false;
};

class Server {
public:
    explicit Server(ServerConfig cfg);
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;
    ~Server();

    // Opens the listening socket; returns the "addr:port" clients use.
    // Throws std::runtime_error.
    std::string listen();
    // Runs the job to its end: 0 when every client sent FINI, 1 when the
    // job failed. `stop_fd` becoming readable (a signalfd) stops it.
    int run(int stop_fd);

private:
    enum class State { auth_mask, auth_answer, joining, startup, running, finished, relay };
    struct Client {
        Client(Channel ch, std::string from, std::string addr, Admission::Id i)
            : channel(std::move(ch)), peer(std::move(from)), source(std::move(addr)), id(i)
        {
        }
        Channel channel;
        std::string peer; // "addr:port" of the client's end
        std::string source; // its address alone (per-source limits)
        Admission::Id id;
        State state = State::auth_mask;
        std::int32_t method = -1;
        Nonce server_nonce {};
        int rank = -1;
        std::deque<Frame> pending; // startup commands waiting for their round
        std::size_t pending_bytes = 0;
        ClientShape shape;
        bool hashi = false;
        std::optional<Barrier> barrier; // its part of the current PMI barrier
        std::optional<RelayInfo> relay; // an impi-relay (state relay), not a client
    };

    void accept_clients();
    void drop(const Admission::Eviction& e); // closes what the admission policy evicted
    bool send_to_stranger(Client& c, std::uint32_t command, ByteView payload);
    void log_stranger(const std::string& kind, const std::string& line);
    void on_readable(Client& c);
    void on_frame(Client& c, Frame f);
    bool auth_first(Client& c, std::uint32_t command); // false: turned away
    void on_auth(Client& c, const Frame& f);
    void on_join(Client& c, const Frame& f);
    void on_relay_join(Client& c, const Frame& f);
    void on_relay(Client& c, const Frame& f);
    // Every cluster that has a relay has all of them (the startup waits).
    [[nodiscard]] bool relays_complete() const;
    [[nodiscard]] std::string missing_relays() const;
    void send_relay_tables();
    void on_running(Client& c, const Frame& f);
    void run_startup_rounds();
    void finish_barrier_if_complete();
    // Turns away one connection that has not joined: `why` goes to it and,
    // rate-limited, to the log; `kind` is the summary's category.
    void reject(Client& c, const std::string& kind, const std::string& why);
    void fail_job(const std::string& why); // tells everyone, ends the run
    void check_deadlines();
    void log(const std::string& line) const;
    [[nodiscard]] std::vector<Client*> members();
    [[nodiscard]] std::string missing_clients() const;

    ServerConfig cfg_;
    std::vector<Client*> by_rank_;
    std::vector<Client*> relays_; // joined impi-relays, in join order
    Admission admission_;
    RateLimitedLog stranger_log_;
    UniqueFd listener_;
    Clock::time_point listener_paused_until_ {}; // out of descriptors
    Admission::Id next_id_ = 1;
    std::vector<std::unique_ptr<Client>> clients_;
    Clock::time_point startup_deadline_ {};
    bool started_ = false; // DONE answered
    std::uint64_t job_id_ = 0;
    std::uint32_t barrier_epoch_ = 0;
    std::optional<int> result_;
};

} // namespace hashi::impi
