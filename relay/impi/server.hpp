// SPDX-License-Identifier: BSD-3-Clause
// impi-server's engine: accepts the clients of one job, authenticates them,
// runs the IMPI startup (IMPI, COLL rounds, DONE), then, for clients that
// announced Hashi's extension, the job-long PMI barriers until every client
// sent FINI. One thread, one poll loop. Any violation by a client that has
// joined fails the whole job: every client is told why (HXER) and the
// server exits non-zero, so no cluster waits for a peer that will never
// come. A stranger that fails to authenticate is only turned away.
#pragma once

#include "auth.hpp"
#include "channel.hpp"
#include "startup_tables.hpp"

#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hashi::impi {

struct ServerConfig {
    std::uint32_t nclients = 1;
    std::string host; // address to listen on; empty: all
    std::uint16_t port = 0; // 0: any free port
    std::chrono::seconds startup_timeout {60}; // every client joined and sent DONE by then
    Credentials credentials;
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
    enum class State { auth_mask, auth_answer, joining, startup, running, finished };
    struct Client {
        Client(Channel ch, std::string from) : channel(std::move(ch)), peer(std::move(from)) { }
        Channel channel;
        std::string peer; // "addr:port" of the client's end
        State state = State::auth_mask;
        std::int32_t method = -1;
        Nonce server_nonce {};
        int rank = -1;
        std::deque<Frame> pending; // startup commands waiting for their round
        std::size_t pending_bytes = 0;
        ClientShape shape;
        bool hashi = false;
        std::optional<Barrier> barrier; // its part of the current PMI barrier
        Clock::time_point auth_deadline {};
    };

    void accept_client();
    void on_readable(Client& c);
    void on_frame(Client& c, Frame f);
    void on_auth(Client& c, const Frame& f);
    void on_join(Client& c, const Frame& f);
    void on_running(Client& c, const Frame& f);
    void run_startup_rounds();
    void finish_barrier_if_complete();
    void reject(Client& c, const std::string& why); // turns away one connection
    void fail_job(const std::string& why); // tells everyone, ends the run
    void check_deadlines();
    void log(const std::string& line) const;
    [[nodiscard]] std::vector<Client*> members();
    [[nodiscard]] std::string missing_clients() const;

    ServerConfig cfg_;
    UniqueFd listener_;
    std::vector<std::unique_ptr<Client>> clients_;
    std::vector<Client*> by_rank_;
    Clock::time_point startup_deadline_ {};
    bool started_ = false; // DONE answered
    std::uint64_t job_id_ = 0;
    std::uint32_t barrier_epoch_ = 0;
    std::optional<int> result_;
};

} // namespace hashi::impi
