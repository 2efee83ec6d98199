// SPDX-License-Identifier: BSD-3-Clause
#include "transport/secure/plain_stream.hpp"

#include <sys/socket.h>

#include <climits>

namespace hashi::secure {

ssize_t plain_stream::read(void* buf, std::size_t len)
{
    const ssize_t r = ::recv(fd_, buf, len, 0);
    if (r > 0)
        counters_.bytes_received += static_cast<std::uint64_t>(r);
    return r;
}

ssize_t send_iovecs(int fd, const iovec* iov, int iovcnt) noexcept
{
    msghdr mh {};
    mh.msg_iov = const_cast<iovec*>(iov);
    mh.msg_iovlen = static_cast<std::size_t>(iovcnt < 0 ? 0 : iovcnt > IOV_MAX ? IOV_MAX : iovcnt);
    return ::sendmsg(fd, &mh, MSG_NOSIGNAL);
}

ssize_t plain_stream::writev(const iovec* iov, int iovcnt)
{
    const ssize_t w = send_iovecs(fd_, iov, iovcnt);
    if (w > 0)
        counters_.bytes_sent += static_cast<std::uint64_t>(w);
    return w;
}

} // namespace hashi::secure
