// SPDX-License-Identifier: BSD-3-Clause
// One TCP connection (path.hpp): registration, handshake bytes, socket state.
#include "transport/path/path.hpp"

#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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
        return 0;
    return static_cast<std::size_t>(n);
}

} // namespace hashi::fi
