// SPDX-License-Identifier: BSD-3-Clause
// The reading half of the user-space receive backend (user_backend.hpp):
// bytes from an attached path's socket, cut into frames, put in sequence
// order, and landed: eager frames handed to matching (user_backend.cpp),
// rendezvous data and RMA payloads read straight into their destination.
// The checks here are the second line of defence after decode_header():
// ids, keys, offsets and lengths in a frame are compared with this
// process's own state before any memory is touched, and a frame that does
// not fit closes its path with the reason logged.
#include "transport/recv/user_backend.hpp"

#include "transport/common.hpp"
#include "transport/objects.hpp"
#include "transport/path/path.hpp"
#include "transport/path/stream_parser.hpp"

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace hashi::fi {

namespace {

constexpr std::size_t initial_rx_buffer = 64 * 1024;
// Receive system calls per path and progress call; the rest waits for the
// next call so one busy peer cannot starve the others.
constexpr int reads_per_event = 16;

} // namespace

void user_backend::attach(path& p)
{
    p.attached = true;
    if (p.rx.size() < initial_rx_buffer)
        p.rx.resize(initial_rx_buffer);
}

void user_backend::detach(path& p)
{
    if (p.stalled) {
        std::erase(stalled_, &p);
        p.stalled = false;
    }
}

bool user_backend::poll()
{
    if (stalled_.empty())
        return false;
    bool moved = false;
    std::vector<path*> again;
    again.swap(stalled_);
    for (path* c : again) {
        c->stalled = false;
        if (on_readable(*c))
            moved = true;
    }
    return moved;
}

// ---- reading ---------------------------------------------------------------

bool user_backend::on_readable(path& c)
{
    if (!c.attached || c.st != path::state::open)
        return false;
    return read_stream(c);
}

bool user_backend::sink_copy(path& c, const std::uint8_t* from, std::size_t n)
{
    auto& s = c.sink;
    std::size_t off = 0;
    // Copy into the sink's iov, then drop what is to be discarded.
    for (std::size_t i = 0; i < s.iov_count && off < n; ++i) {
        const std::size_t m = std::min(s.iov[i].iov_len, n - off);
        if (s.checked_copy) {
            const iovec src {const_cast<std::uint8_t*>(from + off), m};
            const iovec to {s.iov[i].iov_base, m};
            if (::process_vm_writev(::getpid(), &src, 1, &to, 1, 0) != static_cast<ssize_t>(m)) {
                up_.path_failed(c, "RMA write to an address that is not writable memory here");
                return false;
            }
        } else if (m > 0) {
            std::memcpy(s.iov[i].iov_base, from + off, m);
        }
        s.iov[i].iov_base = static_cast<std::uint8_t*>(s.iov[i].iov_base) + m;
        s.iov[i].iov_len -= m;
        off += m;
    }
    s.remaining -= n;
    if (off < n)
        s.discard -= std::min(s.discard, n - off);
    return true;
}

bool user_backend::stream_end(path& c, ssize_t r, std::size_t avail)
{
    if (r < 0 && errno == EBADMSG) {
        up_.path_failed(c, c.read_error(EBADMSG));
        return true;
    }
    // End of stream, or an error.
    const std::string why = r == 0 ? std::string("connection closed") : c.read_error(errno);
    if (avail > 0 || c.sink.active) {
        up_.path_failed(c, why + " in the middle of a frame (did the process die?)");
        return true;
    }
    if (c.bye_received || up_.closing()) {
        c.eof = true;
        up_.path_ended(c);
        return true;
    }
    up_.path_failed(c, why + " without a goodbye (did the process die?)");
    return true;
}

// The payload read into memory is complete: the frame's work is done, and
// frames held back for their turn may follow. False when the path closed.
bool user_backend::finish_direct(path& c)
{
    c.sink.active = false;
    c.p->stats.rx_bytes += c.sink.h.length;
    end_direct(c);
    // Only now is the frame delivered: until its payload is all in, the
    // frames after it (from the peer's other lanes) wait in the reorder
    // stage, so a transfer's chunks land one after the other, at the
    // offsets its receive expects.
    c.p->reorder.delivered();
    return deliver_held(c);
}

bool user_backend::read_stream(path& c)
{
    bool moved = false;
    int reads = 0;
    // A read that returned less than it asked for emptied the socket: the
    // next one would only say EAGAIN, so skip it (epoll is level-triggered
    // and reports what arrives later). Saves a system call per message.
    bool drained = false;
    while (c.st == path::state::open) {
        auto& s = c.sink;
        if (s.active) {
            const std::size_t avail = c.tail - c.head;
            if (avail > 0) {
                const std::size_t n = std::min(avail, s.remaining);
                if (!sink_copy(c, &c.rx[c.head], n))
                    return true;
                c.head += n;
            } else if (s.remaining > 0) {
                if (drained || reads++ >= reads_per_event)
                    return moved;
                // Straight from the socket into the application's memory.
                iovec iov[provider_iov_limit + 1];
                std::size_t k = 0;
                for (std::size_t i = 0; i < s.iov_count; ++i)
                    if (s.iov[i].iov_len > 0)
                        iov[k++] = s.iov[i];
                ssize_t r;
                if (k > 0) {
                    // (An unmapped destination makes readv fail with
                    // EFAULT, which closes the path with the reason.)
                    r = c.read_into(iov, static_cast<int>(k));
                } else {
                    // Bytes nobody wants (a refused RMA write): through the
                    // receive buffer and dropped.
                    r = c.read_bytes(c.rx.data(), std::min(c.rx.size(), s.remaining));
                    if (r > 0) {
                        if (!sink_copy(c, c.rx.data(), static_cast<std::size_t>(r)))
                            return true;
                        moved = true;
                        if (s.remaining == 0 && !finish_direct(c))
                            return true;
                        continue;
                    }
                }
                if (r == 0)
                    return stream_end(c, r, 1);
                if (r < 0) {
                    if (errno == EINTR)
                        continue;
                    if (errno == EAGAIN || errno == EWOULDBLOCK)
                        return moved;
                    up_.path_failed(c, "read failed: " + c.read_error(errno));
                    return true;
                }
                std::size_t got = static_cast<std::size_t>(r);
                drained = got < s.remaining && !c.buffered_input();
                s.remaining -= got;
                for (std::size_t i = 0; i < s.iov_count && got > 0; ++i) {
                    const std::size_t m = std::min(s.iov[i].iov_len, got);
                    s.iov[i].iov_base = static_cast<std::uint8_t*>(s.iov[i].iov_base) + m;
                    s.iov[i].iov_len -= m;
                    got -= m;
                }
            }
            moved = true;
            if (s.remaining == 0 && !finish_direct(c))
                return true;
            continue;
        }

        const std::size_t avail = c.tail - c.head;
        std::size_t need = wire::header_size;
        auto pf = parse_frame(&c.rx[c.head], avail, false);
        if (pf.st == parsed_frame::status::error) {
            up_.path_failed(c, pf.error);
            return true;
        }
        if (pf.st == parsed_frame::status::frame) {
            const auto& h = pf.h;
            if (wire::is_handshake(h.type)) {
                up_.path_failed(c, std::string("unexpected ") + wire::frame_type_name(h.type) +
                        " frame after the handshake");
                return true;
            }
            peer& p = *c.p;
            // This connection's goodbye, whenever the reorder stage lets it
            // through: its end is no failure (a stripe lane ends after its
            // own goodbye, which may wait for frames on the other lanes).
            if (h.type == wire::frame_type::bye)
                c.bye_received = true;
            const auto v = p.reorder.offer(h.seq, h.length);
            if (v == reorder_stage::verdict::behind || v == reorder_stage::verdict::too_far) {
                up_.path_failed(c, "frame out of sequence: got " + std::to_string(h.seq) + ", expected " +
                        std::to_string(p.reorder.expected()));
                return true;
            }
            if (v == reorder_stage::verdict::full) {
                // Read again once the gap is filled (by another path).
                if (!c.stalled) {
                    c.stalled = true;
                    stalled_.push_back(&c);
                }
                return moved;
            }
            if (v == reorder_stage::verdict::hold) {
                // Ahead of its turn (it came over a faster path): keep a
                // copy of all of it, payload included.
                need = wire::header_size + h.length;
                if (avail >= need) {
                    p.reorder.hold(h, &c.rx[c.head + wire::header_size], h.length);
                    c.head += need;
                    moved = true;
                    continue;
                }
            } else if (pf.direct) {
                c.head += wire::header_size;
                moved = true;
                if (!begin_direct(c, h))
                    return true;
                if (!c.sink.active) {
                    // Nothing to read (no payload): delivered at once.
                    p.reorder.delivered();
                    if (!deliver_held(c))
                        return true;
                }
                continue;
            } else {
                need = pf.need;
                if (avail >= need) {
                    const std::uint8_t* payload = &c.rx[c.head + wire::header_size];
                    c.head += need;
                    moved = true;
                    p.reorder.delivered();
                    p.stats.rx_bytes += h.length;
                    if (!frame(c, h, payload) || !deliver_held(c))
                        return true;
                    continue;
                }
            }
        }
        // Need more bytes: make room, then read.
        if (c.rx.size() < need)
            c.rx.resize(std::max(need, c.rx.size() * 2));
        if (c.head > 0 && (c.rx.size() - c.tail < need - avail || c.head == c.tail)) {
            std::memmove(c.rx.data(), c.rx.data() + c.head, avail);
            c.head = 0;
            c.tail = avail;
        }
        if (drained || reads++ >= reads_per_event)
            return moved;
        const std::size_t room = c.rx.size() - c.tail;
        const ssize_t r = c.read_bytes(c.rx.data() + c.tail, room);
        if (r > 0) {
            c.tail += static_cast<std::size_t>(r);
            drained = static_cast<std::size_t>(r) < room && !c.buffered_input();
            moved = true;
            continue;
        }
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return moved;
        return stream_end(c, r, avail);
    }
    return moved;
}

// Frames that waited in the reorder stage for their turn, delivered now
// that the gap before them is filled. A held frame has its payload with it,
// direct ones too.
bool user_backend::deliver_held(path& c)
{
    peer& p = *c.p;
    while (c.st == path::state::open && !c.sink.active) {
        auto f = p.reorder.take_next();
        if (!f)
            return true;
        p.reorder.delivered();
        p.stats.rx_bytes += f->h.length;
        if (inline_payload(f->h)) {
            if (!frame(c, f->h, f->payload.data()))
                return false;
            continue;
        }
        if (!begin_direct(c, f->h))
            return false;
        if (c.sink.active) {
            if (!sink_copy(c, f->payload.data(), f->payload.size()))
                return false;
            c.sink.active = false;
            end_direct(c);
        }
    }
    return c.st == path::state::open;
}

bool user_backend::frame(path& c, const wire::frame_header& h, const std::uint8_t* payload)
{
    peer& p = *c.p;
    switch (h.type) {
    case wire::frame_type::msg:
    case wire::frame_type::tagged:
        ++p.stats.rx_msgs;
        deliver_eager(p, h, payload, h.type == wire::frame_type::tagged);
        return true;
    case wire::frame_type::rts:
        ++p.stats.rx_msgs;
        ++p.stats.rendezvous;
        deliver_rts(p, h);
        return true;
    case wire::frame_type::data:
    case wire::frame_type::rma_write:
        // Zero-length: nothing to read, same bookkeeping as with payload.
        return begin_direct(c, h);
    default:
        return up_.control_frame(c, p, h);
    }
}

bool user_backend::begin_direct(path& c, const wire::frame_header& h)
{
    peer& p = *c.p;
    auto& s = c.sink;
    s = {};
    s.h = h;
    s.remaining = h.length;
    switch (h.type) {
    case wire::frame_type::data: {
        op* o = ops_.find(h.a, op::waits::data, &p);
        if (o == nullptr || h.b != o->received || h.length > o->expected - o->received) {
            up_.path_failed(c, "rendezvous data for an unknown receive or out of its bounds");
            return false;
        }
        s.iov_count = slice(o->iov.data(), o->iov_count, h.b, h.length, s.iov);
        break;
    }
    case wire::frame_type::rma_write: {
        ++p.stats.rma_ops;
        mr_obj* r = nullptr;
        const int status = check_region(domain_, h.a, FI_REMOTE_WRITE, h.b, h.length, r);
        if (status != 0) {
            log_warn("refused an RMA write from %s: %s (key %llu)", p.describe().c_str(), fi_strerror(-status),
                static_cast<unsigned long long>(h.a));
            s.discard = h.length;
            s.status = status;
        } else {
            s.iov[0] = {r->base + h.b, h.length};
            s.iov_count = h.length > 0 ? 1 : 0;
            s.checked_copy = r->base == nullptr;
        }
        break;
    }
    case wire::frame_type::rma_read_resp: {
        op* o = ops_.find(h.a, op::waits::rma, &p);
        if (o == nullptr || o->k != op::kind::read || h.b != o->received || h.length > o->length - o->received ||
            h.c != 0) {
            up_.path_failed(c, "RMA read data for an unknown read or out of its bounds");
            return false;
        }
        s.iov_count = slice(o->iov.data(), o->iov_count, h.b, h.length, s.iov);
        break;
    }
    default:
        up_.path_failed(c, std::string("unexpected payload of a ") + wire::frame_type_name(h.type) + " frame");
        return false;
    }
    s.active = true;
    if (s.remaining == 0) {
        s.active = false;
        end_direct(c);
    }
    return c.st == path::state::open;
}

void user_backend::end_direct(path& c)
{
    peer& p = *c.p;
    const wire::frame_header& h = c.sink.h;
    switch (h.type) {
    case wire::frame_type::data: {
        op* o = ops_.find(h.a, op::waits::data, &p);
        o->received += h.length;
        if (o->received == o->expected)
            done_.recv_done(*o);
        break;
    }
    case wire::frame_type::rma_write:
        // Delivery complete: the data is in the target's memory now.
        up_.rma_write_landed(p, h, c.sink.status);
        break;
    case wire::frame_type::rma_read_resp: {
        op* o = ops_.find(h.a, op::waits::rma, &p);
        o->received += h.length;
        if (o->received == o->length)
            up_.rma_read_done(*o);
        break;
    }
    default:
        break;
    }
}

} // namespace hashi::fi
