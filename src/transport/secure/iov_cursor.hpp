// SPDX-License-Identifier: BSD-3-Clause
// A read position in an iovec array: the sealing streams gather many small
// iovecs (frame headers, short payloads) into one record, so they walk the
// array by bytes rather than by element.
#pragma once

#include <sys/uio.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace hashi::secure {

class iov_cursor {
public:
    iov_cursor(const iovec* iov, int n) noexcept : iov_(iov), n_(n < 0 ? 0 : n) { skip_empty(); }

    bool done() const noexcept { return i_ >= n_; }

    // Bytes left in the current element (0 when done).
    std::size_t contiguous() const noexcept { return done() ? 0 : iov_[i_].iov_len - off_; }
    const std::uint8_t* here() const noexcept { return static_cast<const std::uint8_t*>(iov_[i_].iov_base) + off_; }

    std::size_t remaining() const noexcept
    {
        std::size_t r = contiguous();
        for (int j = i_ + 1; j < n_; ++j)
            r += iov_[j].iov_len;
        return r;
    }

    void advance(std::size_t len) noexcept
    {
        while (len > 0 && !done()) {
            const std::size_t m = std::min(len, contiguous());
            off_ += m;
            len -= m;
            if (off_ == iov_[i_].iov_len) {
                ++i_;
                off_ = 0;
            }
        }
        skip_empty();
    }

    // Copies up to `len` bytes into `out` and advances past them.
    std::size_t gather(std::uint8_t* out, std::size_t len) noexcept
    {
        std::size_t got = 0;
        while (got < len && !done()) {
            const std::size_t m = std::min(len - got, contiguous());
            std::memcpy(out + got, here(), m);
            got += m;
            advance(m);
        }
        return got;
    }

private:
    void skip_empty() noexcept
    {
        while (i_ < n_ && iov_[i_].iov_len == off_) {
            ++i_;
            off_ = 0;
        }
    }

    const iovec* iov_;
    int n_;
    int i_ = 0;
    std::size_t off_ = 0;
};

} // namespace hashi::secure
