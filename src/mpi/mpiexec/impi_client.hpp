// SPDX-License-Identifier: BSD-3-Clause
// mpiexec's side of a federated job (mpiexec -client K addr:port): joins
// impi-server (AUTH, IMPI, COLL, DONE), learns every process of every
// cluster, then carries the job's global PMI barriers over the same
// connection until FINI (relay/README.md). Startup is blocking and bounded
// by a deadline; after it, the connection is one more descriptor in Job's
// poll loop.
#pragma once

#include "pmi_server.hpp"
#include "relay/impi/auth.hpp"
#include "relay/impi/channel.hpp"
#include "relay/impi/relay_tables.hpp"
#include "relay/impi/startup_tables.hpp"

#include <chrono>
#include <initializer_list>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace hashi::mpiexec {

struct ImpiSettings {
    int client = 0;
    std::string server; // addr:port
    impi::Credentials credentials;
    std::chrono::seconds timeout {60};
};

// What the startup taught this cluster about the whole job.
struct FederatedJob {
    int nclients = 1;
    int global_size = 0;
    int rank_offset = 0; // global rank of this cluster's first rank
    std::uint64_t job_id = 0;
    std::vector<int> node_of_rank; // by global rank: global node id (client 0's hosts first)
    std::vector<impi::RelayAddress> relays; // this cluster's impi-relays (empty: none), by relay id
};

class ImpiError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The startup was cut short by a signal on the interrupt descriptor.
class ImpiInterrupted : public ImpiError {
public:
    using ImpiError::ImpiError;
};

class ImpiClient {
public:
    explicit ImpiClient(ImpiSettings settings);

    // Runs the startup for this cluster's processes. Returns early with an
    // ImpiError when `interrupt_fd` (mpiexec's signalfd) becomes readable,
    // the deadline passes, or the server refuses (HXER) or is gone; the
    // message says what happened and what to do. A connection the server
    // closes without a word before the startup completed (a flood evicted
    // it, a deadline passed) is made again, with backoff, until the
    // deadline; stderr says so once.
    FederatedJob join(const impi::LocalClient& local, int interrupt_fd);

    [[nodiscard]] int fd() const { return channel_ ? channel_->fd() : -1; }
    [[nodiscard]] bool open() const { return channel_ && channel_->open(); }
    [[nodiscard]] const std::string& server() const { return settings_.server; }

    // What arrived from the server while the job runs.
    struct Event {
        enum class Kind { barrier_out, aborted, failed } kind;
        std::vector<KeyValue> entries; // barrier_out
        int code = 1; // aborted: the failing cluster's exit status
        std::string message; // aborted, failed: for the user
    };
    // Reads what the server sent (call when fd() is readable). A closed or
    // broken connection is a `failed` event; the connection is then closed.
    std::vector<Event> on_readable();

    // The cluster's part of a global PMI barrier: the entries its ranks
    // put since the previous one.
    bool send_barrier(const std::vector<KeyValue>& entries, std::string& error);
    // The cluster's job failed: tells the server why, then closes.
    void send_abort(int code, const std::string& reason);
    // Every rank of the cluster ended well: FINI, then close.
    void send_fini();

private:
    // One attempt at the startup on a new connection.
    FederatedJob join_once(
        const impi::LocalClient& local, int interrupt_fd, impi::Clock::time_point deadline, bool reconnecting);
    impi::Frame expect(std::uint32_t command, const char* step, impi::Clock::time_point deadline, int interrupt_fd);
    impi::Frame expect_one_of(std::initializer_list<std::uint32_t> commands, const char* step,
        impi::Clock::time_point deadline, int interrupt_fd);
    void authenticate(impi::Clock::time_point deadline, int interrupt_fd);
    [[nodiscard]] std::string refused(const impi::Frame& f) const;

    ImpiSettings settings_;
    std::unique_ptr<impi::Channel> channel_;
    std::uint32_t barrier_epoch_ = 0;
};

// The local host's IPv4 address as seen on the connection to the server,
// as IMPI's host and proc addresses (informational: ranks do not use them).
impi::Ipv6 local_address_of(int fd);

} // namespace hashi::mpiexec
