// SPDX-License-Identifier: BSD-3-Clause
#include "transport/secure/integrity_stream.hpp"

#include "transport/secure/iov_cursor.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace hashi::secure {

integrity_stream::integrity_stream(int fd, const secret& send_key, const secret& recv_key, mac_kind kind) :
    fd_(fd), sealer_(kind, send_key), opener_(kind, recv_key)
{
}

std::string integrity_stream::describe() const
{
    return std::string("integrity (") + mac_name(sealer_.kind()) + " records of up to " +
        std::to_string(max_record_payload / 1024) + " KiB, user space)";
}

stream_counters integrity_stream::counters() const
{
    return {sealer_.records(), opener_.records(), bytes_sent_, bytes_received_};
}

bool integrity_stream::buffered_input() const
{
    return dead_ || plain_left_ > 0 || (in_tail_ > in_head_ && opener_.decidable(in_.data() + in_head_, in_tail_ - in_head_));
}

ssize_t integrity_stream::read(void* buf, std::size_t len)
{
    if (dead_) {
        errno = EBADMSG;
        return -1;
    }
    if (in_.empty())
        in_.resize(buffer_records * max_record_size);
    auto* out = static_cast<std::uint8_t*>(buf);
    std::size_t got = 0;
    while (got < len) {
        if (plain_left_ > 0) {
            const std::size_t m = std::min(len - got, plain_left_);
            std::memcpy(out + got, in_.data() + plain_at_, m);
            got += m;
            plain_at_ += m;
            plain_left_ -= m;
            continue;
        }
        const opened_record r = opener_.open(in_.data() + in_head_, in_tail_ - in_head_);
        if (r.what == opened_record::verdict::bad) {
            dead_ = true;
            error_ = r.reason;
            if (got > 0)
                break; // verified bytes first; the next read says EBADMSG
            errno = EBADMSG;
            return -1;
        }
        if (r.what == opened_record::verdict::record) {
            plain_at_ = in_head_ + record_header_size;
            plain_left_ = r.payload_len;
            in_head_ += r.size;
            continue;
        }
        // No complete record: what is already returned goes now rather than
        // costing a system call that will most likely say EAGAIN.
        if (got > 0)
            break;
        if (in_head_ == in_tail_)
            in_head_ = in_tail_ = 0;
        else if (in_.size() - in_head_ < max_record_size) {
            std::memmove(in_.data(), in_.data() + in_head_, in_tail_ - in_head_);
            in_tail_ -= in_head_;
            in_head_ = 0;
        }
        const ssize_t n = ::recv(fd_, in_.data() + in_tail_, in_.size() - in_tail_, 0);
        if (n > 0) {
            in_tail_ += static_cast<std::size_t>(n);
            continue;
        }
        if (n == 0 && in_tail_ > in_head_) {
            dead_ = true;
            error_ = "the connection ended inside integrity record " + std::to_string(opener_.records()) + " (" +
                std::to_string(in_tail_ - in_head_) + " bytes of it received): truncated";
            errno = EBADMSG;
            return -1;
        }
        return n; // 0: the end at a record boundary; -1: recv's errno
    }
    bytes_received_ += got;
    return static_cast<ssize_t>(got);
}

std::size_t integrity_stream::seal_from(iov_cursor& from)
{
    std::size_t taken = 0;
    while (!from.done() && write_errno_ == 0) {
        // A record of whatever fits, down to one byte: small frames still go
        // out at once rather than waiting for a whole record's worth.
        const std::size_t want = std::min(from.remaining(), max_record_payload) + record_overhead;
        const auto room = out_.space(want);
        if (room.size() < record_overhead + 1)
            break;
        std::uint8_t* record = room.data();
        const std::size_t n = from.gather(record + record_header_size, std::min(want, room.size()) - record_overhead);
        if (!sealer_.seal(record, n)) {
            // OpenSSL failing to MAC is not the peer's doing; the stream
            // cannot go on without a hole, so it stops here.
            error_ = std::string("sealing an integrity record failed in OpenSSL (") + mac_name(sealer_.kind()) + ")";
            write_errno_ = EIO;
            break;
        }
        out_.commit(n + record_overhead);
        taken += n;
    }
    return taken;
}

ssize_t integrity_stream::writev(const iovec* iov, int iovcnt)
{
    if (write_errno_ != 0) {
        errno = write_errno_;
        return -1;
    }
    iov_cursor from(iov, iovcnt);
    if (from.done())
        return 0;
    std::size_t taken = 0;
    for (;;) {
        taken += seal_from(from);
        if (out_.send_to(fd_) < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                if (taken == 0)
                    return -1;
                write_errno_ = errno; // these bytes were taken; the next call reports it
            }
            break;
        }
        if (from.done() || write_errno_ != 0)
            break;
    }
    if (taken == 0) {
        errno = write_errno_ != 0 ? write_errno_ : EAGAIN;
        return -1;
    }
    bytes_sent_ += taken;
    return static_cast<ssize_t>(taken);
}

int integrity_stream::flush()
{
    if (write_errno_ != 0) {
        errno = write_errno_;
        return -1;
    }
    if (out_.send_to(fd_) == 0)
        return 0;
    if (errno != EAGAIN && errno != EWOULDBLOCK)
        write_errno_ = errno;
    return -1;
}

} // namespace hashi::secure
