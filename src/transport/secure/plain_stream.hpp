// SPDX-License-Identifier: BSD-3-Clause
// No protection: recv and sendmsg on the socket, exactly what the path does
// without a stream, so protection none costs one virtual call per I/O.
#pragma once

#include "transport/secure/byte_stream.hpp"

namespace hashi::secure {

// sendmsg(MSG_NOSIGNAL) of at most IOV_MAX iovecs: the plain stream's
// writev, and the TLS stream's once the kernel encrypts.
ssize_t send_iovecs(int fd, const iovec* iov, int iovcnt) noexcept;

class plain_stream final : public byte_stream {
public:
    explicit plain_stream(int fd) noexcept : fd_(fd) {}

    handshake_status handshake() override { return handshake_status::done; }
    ssize_t read(void* buf, std::size_t len) override;
    ssize_t writev(const iovec* iov, int iovcnt) override;
    bool buffered_input() const override { return false; }
    bool output_pending() const override { return false; }
    int flush() override { return 0; }
    const std::string& error() const override { return error_; }
    std::string describe() const override { return "none (plain TCP)"; }
    stream_counters counters() const override { return counters_; }

private:
    int fd_;
    std::string error_;
    stream_counters counters_;
};

} // namespace hashi::secure
