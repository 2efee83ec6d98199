// SPDX-License-Identifier: BSD-3-Clause
// The byte stream a path (one TCP connection) reads and writes once its
// authenticated handshake is done: plain, integrity-protected or TLS. It has
// the semantics of the system calls the path used before (recv, sendmsg with
// MSG_NOSIGNAL), so the path does not care which one it has, plus what a
// stream with buffers of its own needs: input already decoded that epoll
// cannot see, output sealed but not yet on the socket, and a handshake.
//
// Contract for the caller (the path):
// - the socket is connected and non-blocking, and nothing past the
//   authenticated handshake has been read from it (TLS takes the fd over);
// - the stream never closes the fd: the path closes it after destroying
//   (or abandoning) the stream;
// - one thread at a time (the endpoint's progress thread);
// - epoll is level-triggered: after an EPOLLIN, call read until it returns
//   -1/EAGAIN, and while buffered_input() is true call read again without
//   waiting; while output_pending() is true keep EPOLLOUT armed and call
//   flush() when writable;
// - handshake() until it returns done before any read or writev (plain and
//   integrity streams are done at once); want_read / want_write say which
//   epoll event to wait for.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cstdint>
#include <string>

namespace hashi::secure {

enum class handshake_status { done, want_read, want_write, failed };

// Which end of the connection this is: the connector is the TLS client and
// sends under the connector-to-acceptor key.
enum class stream_role { connector, acceptor };

// Whether the kernel does the record crypto of this stream (kTLS).
struct kernel_offload {
    bool send = false;
    bool recv = false;
};

struct stream_counters {
    std::uint64_t records_sent = 0; // 0 for the plain stream
    std::uint64_t records_received = 0;
    std::uint64_t bytes_sent = 0; // plaintext bytes taken by writev
    std::uint64_t bytes_received = 0; // plaintext bytes returned by read
};

class byte_stream {
public:
    virtual ~byte_stream() = default;
    byte_stream() = default;
    byte_stream(const byte_stream&) = delete;
    byte_stream& operator=(const byte_stream&) = delete;

    // Drives the stream's own handshake (TLS); failed: error() says why.
    virtual handshake_status handshake() = 0;

    // Like recv(2), len > 0: > 0 bytes into buf, 0 at the end of the stream, -1 with
    // errno: EAGAIN nothing ready; EBADMSG the peer's bytes failed
    // authentication or are malformed (error() says how; the stream is dead
    // from then on and the path closes the connection); others from recv.
    virtual ssize_t read(void* buf, std::size_t len) = 0;

    // Like sendmsg(2) with MSG_NOSIGNAL: how many bytes of iov were taken
    // (they may sit sealed in the stream's bounded output buffer, see
    // output_pending), or -1 with errno: EAGAIN when nothing could be taken
    // (that buffer is full and the socket would block); EPIPE, ECONNRESET...
    // from the socket. 0 only when iov holds no byte.
    virtual ssize_t writev(const iovec* iov, int iovcnt) = 0;

    // Plaintext (or a complete record) already read from the socket that
    // epoll cannot see: read again without waiting for EPOLLIN.
    virtual bool buffered_input() const = 0;

    // Sealed bytes not yet on the socket: arm EPOLLOUT, call flush().
    virtual bool output_pending() const = 0;

    // Puts pending sealed bytes on the socket: 0 when none is left, -1 with
    // errno (EAGAIN: some are left, wait for EPOLLOUT; others: the socket
    // failed).
    virtual int flush() = 0;

    // Why the last EBADMSG or failed handshake happened, for the path's
    // message ("" when nothing failed).
    virtual const std::string& error() const = 0;

    // One line for logs and statistics: the protection, cipher suite or MAC,
    // key exchange, and who does the record crypto (kernel or user space).
    virtual std::string describe() const = 0;

    virtual kernel_offload offload() const { return {}; }
    virtual stream_counters counters() const = 0;
};

} // namespace hashi::secure
