// SPDX-License-Identifier: BSD-3-Clause
#include "transport/secure/tls_socket_bio.hpp"

#include <openssl/bio.h>
#include <sys/socket.h>

#include <cerrno>
#include <mutex>

namespace hashi::secure {

namespace {

tls_socket_bio* self(BIO* b)
{
    return static_cast<tls_socket_bio*>(BIO_get_data(b));
}

bool would_block(int e)
{
    return e == EAGAIN || e == EWOULDBLOCK || e == EINTR;
}

int bio_write(BIO* b, const char* data, int len)
{
    BIO_clear_retry_flags(b);
    auto* s = self(b);
    s->set_errno(0);
    const auto* p = reinterpret_cast<const std::uint8_t*>(data);
    auto n = s->output().append(p, static_cast<std::size_t>(len));
    if (n == 0) {
        // Full: make room by sending, then take what fits.
        if (s->output().send_to(s->fd()) < 0 && !would_block(errno)) {
            s->set_errno(errno);
            return -1;
        }
        n = s->output().append(p, static_cast<std::size_t>(len));
    }
    if (n == 0) {
        BIO_set_retry_write(b);
        return -1;
    }
    return static_cast<int>(n);
}

int bio_read(BIO* b, char* data, int len)
{
    BIO_clear_retry_flags(b);
    auto* s = self(b);
    s->set_errno(0); // a recv that returns 0 (the end) must not leave an older EAGAIN behind
    for (;;) {
        const ssize_t r = ::recv(s->fd(), data, static_cast<std::size_t>(len), 0);
        if (r >= 0)
            return static_cast<int>(r);
        if (errno == EINTR)
            continue;
        s->set_errno(errno);
        if (would_block(errno))
            BIO_set_retry_read(b);
        return -1;
    }
}

long bio_ctrl(BIO* b, int cmd, long, void*)
{
    auto* s = self(b);
    switch (cmd) {
    case BIO_CTRL_FLUSH:
        // The handshake flushes after each flight: it leaves now, or the
        // handshake says want_write.
        BIO_clear_retry_flags(b);
        if (s->output().send_to(s->fd()) == 0)
            return 1;
        s->set_errno(errno);
        if (would_block(errno))
            BIO_set_retry_write(b);
        return 0;
    case BIO_CTRL_WPENDING:
        return static_cast<long>(s->output().size());
    case BIO_CTRL_PUSH:
    case BIO_CTRL_POP:
    case BIO_CTRL_DUP:
        return 1;
    default:
        return 0;
    }
}

int bio_create(BIO* b)
{
    BIO_set_init(b, 1);
    return 1;
}

BIO_METHOD* method()
{
    static BIO_METHOD* m = nullptr;
    static std::once_flag once;
    std::call_once(once, [] {
        m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "hashi socket (MSG_NOSIGNAL)");
        if (m != nullptr) {
            BIO_meth_set_write(m, bio_write);
            BIO_meth_set_read(m, bio_read);
            BIO_meth_set_ctrl(m, bio_ctrl);
            BIO_meth_set_create(m, bio_create);
        }
    });
    return m;
}

} // namespace

tls_socket_bio::tls_socket_bio(int fd, std::size_t capacity) : fd_(fd), out_(capacity) {}

bio_st* tls_socket_bio::make_bio()
{
    BIO_METHOD* m = method();
    BIO* b = m != nullptr ? BIO_new(m) : nullptr;
    if (b != nullptr)
        BIO_set_data(b, this);
    return b;
}

} // namespace hashi::secure
