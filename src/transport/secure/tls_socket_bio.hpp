// SPDX-License-Identifier: BSD-3-Clause
// The BIO under a TLS stream when the kernel does not do the record crypto:
// recv for reading, and for writing a send_buffer flushed with
// send(MSG_NOSIGNAL). OpenSSL's own socket BIO write()s, which raises
// SIGPIPE on a connection the peer reset (and ranks keep SIGPIPE's default,
// death); it also issues one write per record, where this buffer lets
// several records leave in one send.
#pragma once

#include "transport/secure/send_buffer.hpp"

struct bio_st;

namespace hashi::secure {

class tls_socket_bio {
public:
    tls_socket_bio(int fd, std::size_t capacity);

    // A new BIO reading and writing through this object (which must outlive
    // it); nullptr if OpenSSL cannot make one.
    bio_st* make_bio();

    int fd() const noexcept { return fd_; }
    send_buffer& output() noexcept { return out_; }
    const send_buffer& output() const noexcept { return out_; }
    // errno of the last failed recv or send, for SSL_ERROR_SYSCALL.
    int last_errno() const noexcept { return last_errno_; }
    void set_errno(int e) noexcept { last_errno_ = e; }

private:
    int fd_;
    send_buffer out_;
    int last_errno_ = 0;
};

} // namespace hashi::secure
