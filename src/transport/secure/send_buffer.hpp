// SPDX-License-Identifier: BSD-3-Clause
// The bounded buffer of sealed bytes a protected stream has taken from its
// caller but the socket has not (yet): records are sealed into it, and it
// goes to the socket in as few send calls as the kernel allows (one send
// for several records, rather than one per record).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace hashi::secure {

class send_buffer {
public:
    explicit send_buffer(std::size_t capacity) : capacity_(capacity) {}

    bool pending() const noexcept { return tail_ > head_; }
    std::size_t size() const noexcept { return tail_ - head_; }

    // The contiguous free space at the end, after moving what is pending to
    // the front if there is less than `want` there; may be smaller than
    // `want`, or empty when the buffer is full.
    std::span<std::uint8_t> space(std::size_t want);
    // The `n` bytes written at the start of space() are now pending.
    void commit(std::size_t n) noexcept { tail_ += n; }
    // Takes as many of [p, p + n) as fit; how many.
    std::size_t append(const std::uint8_t* p, std::size_t n);

    // send(MSG_NOSIGNAL) until nothing is pending (0) or the socket fails or
    // would block (-1 with errno).
    int send_to(int fd);

private:
    std::size_t capacity_;
    std::vector<std::uint8_t> bytes_; // allocated on first use: idle connections cost nothing
    std::size_t head_ = 0;
    std::size_t tail_ = 0;
};

} // namespace hashi::secure
