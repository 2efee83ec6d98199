// SPDX-License-Identifier: BSD-3-Clause
// One TCP connection carrying IMPI startup messages: buffers what arrives,
// cuts it into frames (wire.hpp checks every length before it is
// buffered), and sends whole frames. Used by impi-server for each client
// and by mpiexec for its connection to the server.
#pragma once

#include "common/unique_fd.hpp"
#include "wire.hpp"

#include <chrono>
#include <optional>
#include <string>

namespace hashi::impi {

using Clock = std::chrono::steady_clock;

class Channel {
public:
    // `peer` is who sends on this connection; `name` describes it in
    // messages ("client 1 (10.0.0.2:41234)").
    Channel(UniqueFd fd, Sender peer, std::string name);

    [[nodiscard]] int fd() const { return fd_.get(); }
    [[nodiscard]] bool open() const { return fd_.valid(); }
    [[nodiscard]] const std::string& name() const { return name_; }
    void rename(std::string name) { name_ = std::move(name); }
    void close() { fd_.reset(); }

    enum class Status { ok, closed, error };
    // Reads what the socket has now (call when poll says readable).
    // closed: orderly EOF; error: `error` says what happened.
    Status read_available(std::string& error);
    // Takes the next whole frame already read, if any. A malformed header
    // sets `error` (the connection cannot be resynchronised after that).
    std::optional<Frame> next_frame(std::string& error);
    // The command of the frame being received, as soon as its first four
    // bytes are in (before its payload): lets the reader refuse a frame
    // that has no business here without buffering it.
    [[nodiscard]] std::optional<std::uint32_t> incoming_command() const;

    // Waits for the next frame until `deadline`, returning early when
    // `interrupt_fd` (if >= 0) becomes readable.
    struct Received {
        enum class Status { frame, timeout, closed, error, interrupted } status;
        Frame frame;
        std::string error;
    };
    Received receive(Clock::time_point deadline, int interrupt_fd = -1);

    // Sends one frame, waiting at most `timeout` for the peer to take it.
    // Returns false (with `error`) when the peer is gone or stuck.
    bool send(std::uint32_t command, ByteView payload, std::string& error,
        std::chrono::milliseconds timeout = std::chrono::seconds(30));
    bool send(std::uint32_t command, ByteView payload)
    {
        std::string ignored;
        return send(command, payload, ignored);
    }

private:
    UniqueFd fd_;
    Sender peer_;
    std::string name_;
    Bytes in_;
};

// A connection refused at once (nobody listens there), when the caller
// asked not to retry that.
class ConnectRefused : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Connects to "host:port" (a name or a dotted address) until `deadline`.
// A refused connection is retried every 200 ms while `retry_refused` (the
// server may not be up yet), else throws ConnectRefused. A server whose
// accept queue is full drops SYNs: the kernel's SYN retries are waited for
// until `deadline`, not for its own two minutes. Throws std::runtime_error.
UniqueFd connect_to(const std::string& host_port, Clock::time_point deadline, bool retry_refused = true);

// Sets what every startup connection needs: no Nagle delay (small
// request-answer messages), and keepalive probes, a user timeout and
// linear retransmission timeouts, so a peer whose host or path vanished
// without closing is noticed within 20 s (HASHI_IMPI_PEER_TIMEOUT) instead
// of never (a silent server would otherwise hang a PMI barrier).
void tune_socket(int fd);

// Splits "host:port"; throws std::invalid_argument with a clear message.
std::pair<std::string, std::string> split_host_port(const std::string& host_port);

} // namespace hashi::impi
