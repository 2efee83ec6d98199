// SPDX-License-Identifier: BSD-3-Clause
#include "transport/secure/send_buffer.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace hashi::secure {

std::span<std::uint8_t> send_buffer::space(std::size_t want)
{
    if (bytes_.empty())
        bytes_.resize(capacity_);
    if (bytes_.size() - tail_ < want && head_ > 0) {
        std::memmove(bytes_.data(), bytes_.data() + head_, tail_ - head_);
        tail_ -= head_;
        head_ = 0;
    }
    return {bytes_.data() + tail_, bytes_.size() - tail_};
}

std::size_t send_buffer::append(const std::uint8_t* p, std::size_t n)
{
    std::size_t taken = 0;
    while (taken < n) {
        const auto to = space(n - taken);
        if (to.empty())
            break;
        const std::size_t m = std::min(n - taken, to.size());
        std::memcpy(to.data(), p + taken, m);
        commit(m);
        taken += m;
    }
    return taken;
}

int send_buffer::send_to(int fd)
{
    while (tail_ > head_) {
        const ssize_t w = ::send(fd, bytes_.data() + head_, tail_ - head_, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        head_ += static_cast<std::size_t>(w);
    }
    head_ = tail_ = 0;
    return 0;
}

} // namespace hashi::secure
