// SPDX-License-Identifier: BSD-3-Clause
// Two ends of one real TCP connection over loopback, non-blocking and with
// TCP_NODELAY as the provider's sockets are: what the byte-stream tests and
// bench/secure run the streams over.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <stdexcept>

namespace hashi::testing {

struct loopback_pair {
    int a = -1; // the connecting end
    int b = -1; // the accepted end
    loopback_pair() = default;
    loopback_pair(const loopback_pair&) = delete;
    loopback_pair& operator=(const loopback_pair&) = delete;
    ~loopback_pair()
    {
        if (a >= 0)
            ::close(a);
        if (b >= 0)
            ::close(b);
    }
};

// buffer_bytes > 0 shrinks a's send and b's receive buffers, so that a
// writer meets EAGAIN soon.
inline std::unique_ptr<loopback_pair> make_loopback_pair(int buffer_bytes = 0)
{
    auto p = std::make_unique<loopback_pair>();
    const int l = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in sa {};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t sl = sizeof sa;
    if (l < 0 || ::bind(l, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(l, 1) != 0 ||
        ::getsockname(l, reinterpret_cast<sockaddr*>(&sa), &sl) != 0) {
        if (l >= 0)
            ::close(l);
        throw std::runtime_error("cannot listen on loopback");
    }
    p->a = ::socket(AF_INET, SOCK_STREAM, 0);
    if (buffer_bytes > 0)
        ::setsockopt(p->a, SOL_SOCKET, SO_SNDBUF, &buffer_bytes, sizeof buffer_bytes);
    const bool connected = ::connect(p->a, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
    p->b = connected ? ::accept(l, nullptr, nullptr) : -1;
    ::close(l);
    if (p->b < 0)
        throw std::runtime_error("cannot connect on loopback");
    if (buffer_bytes > 0)
        ::setsockopt(p->b, SOL_SOCKET, SO_RCVBUF, &buffer_bytes, sizeof buffer_bytes);
    const int one = 1;
    for (const int fd : {p->a, p->b}) {
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    }
    return p;
}

} // namespace hashi::testing
