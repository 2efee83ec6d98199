// SPDX-License-Identifier: BSD-3-Clause
// One TCP connection (path.hpp): registration, handshake bytes, socket state.
#include "transport/path/path.hpp"

#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace hashi::fi {

void path::watch(progress_loop& loop, bool reads, bool writes)
{
    reads_ = reads;
    want_write_ = writes;
    reg_ = loop.watch(fd_, this, (reads ? std::uint32_t {EPOLLIN} : 0u) | (writes ? std::uint32_t {EPOLLOUT} : 0u));
}

void path::want_write(bool on)
{
    if (want_write_ == on || fd_ < 0)
        return;
    want_write_ = on;
    reg_.want((reads_ ? std::uint32_t {EPOLLIN} : 0u) | (on ? std::uint32_t {EPOLLOUT} : 0u));
}

void path::close() noexcept
{
    reg_.reset();
    if (fd_ >= 0) {
        ::close(fd_);
        fd_ = -1;
    }
    st = state::closed;
}

bool path::flush_handshake(std::string& error)
{
    while (hs_sent < hs_out.size()) {
        const ssize_t n = ::send(fd_, hs_out.data() + hs_sent, hs_out.size() - hs_sent, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                want_write(true);
                return false;
            }
            if (errno == EINTR)
                continue;
            error = std::string("handshake write: ") + std::strerror(errno);
            return false;
        }
        hs_sent += static_cast<std::size_t>(n);
    }
    hs_out.clear();
    hs_sent = 0;
    return true;
}

std::size_t path::unsent_bytes() const noexcept
{
    if (fd_ < 0 || rx_only)
        return 0;
    int n = 0;
    if (::ioctl(fd_, SIOCOUTQ, &n) != 0)
        n = 0;
    return static_cast<std::size_t>(n) + (stream && stream->output_pending() ? 1 : 0);
}

std::size_t path::kernel_unsent_bytes() const noexcept
{
    int n = 0;
    if (fd_ < 0 || ::ioctl(fd_, SIOCOUTQNSD, &n) != 0 || n < 0)
        return 0;
    return static_cast<std::size_t>(n);
}

ssize_t path::read_bytes(void* buf, std::size_t len)
{
    if (stream)
        return stream->read(buf, len);
    if (read_budget != unlimited) {
        if (read_budget == 0) {
            errno = EAGAIN;
            return -1;
        }
        const ssize_t r = ::recv(fd_, buf, std::min(len, read_budget), 0);
        if (r > 0)
            read_budget -= static_cast<std::size_t>(r);
        return r;
    }
    return ::recv(fd_, buf, len, 0);
}

ssize_t path::read_into(const iovec* iov, int count)
{
    if (!stream && read_budget != unlimited) {
        // The first iov cut to the budget: the caller loops.
        for (int i = 0; i < count; ++i)
            if (iov[i].iov_len > 0)
                return read_bytes(iov[i].iov_base, iov[i].iov_len);
        return 0;
    }
    if (!stream)
        return ::readv(fd_, iov, count);
    // A stream reads into one buffer at a time; the caller loops.
    for (int i = 0; i < count; ++i)
        if (iov[i].iov_len > 0)
            return stream->read(iov[i].iov_base, iov[i].iov_len);
    return 0;
}

std::string path::read_error(int err) const
{
    if (err == EBADMSG && stream)
        return "the peer's bytes failed authentication (" + stream->error() + ")";
    return std::strerror(err);
}

} // namespace hashi::fi
