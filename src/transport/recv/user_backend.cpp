// SPDX-License-Identifier: BSD-3-Clause
// The user-space receive backend (user_backend.hpp). The checks here are
// the second line of defence after decode_header(): ids, keys, offsets and
// lengths in a frame are compared with this process's own state before any
// memory is touched, and a frame that does not fit closes its path with the
// reason logged.
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

std::size_t total_length(const iovec* iov, std::size_t count)
{
    std::size_t n = 0;
    for (std::size_t i = 0; i < count; ++i)
        n += iov[i].iov_len;
    return n;
}

// Copies `len` bytes from `src` into the buffer described by `iov`.
void scatter(const iovec* iov, std::size_t count, const std::uint8_t* src, std::size_t len)
{
    for (std::size_t i = 0; i < count && len > 0; ++i) {
        const std::size_t m = std::min(iov[i].iov_len, len);
        if (m > 0)
            std::memcpy(iov[i].iov_base, src, m);
        src += m;
        len -= m;
    }
}

match::source_t source_of(const peer& p)
{
    return p.fi_addr == FI_ADDR_NOTAVAIL ? match::any_source : p.fi_addr;
}

} // namespace

user_backend::user_backend(domain_obj& domain, const bindings& b, peer_table& peers, operations& ops,
    completions& done, receive_events& up, const std::size_t& min_multi_recv)
    : domain_(domain), b_(b), peers_(peers), ops_(ops), done_(done), up_(up), min_multi_recv_(min_multi_recv)
{
}

void user_backend::attach(path& p)
{
    p.attached = true;
    if (p.rx.empty())
        p.rx.resize(initial_rx_buffer);
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
    // End of stream, or an error.
    const std::string why = r == 0 ? std::string("connection closed") : std::string(std::strerror(errno));
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
                    r = ::readv(c.fd(), iov, static_cast<int>(k));
                } else {
                    // Bytes nobody wants (a refused RMA write): through the
                    // receive buffer and dropped.
                    r = ::recv(c.fd(), c.rx.data(), std::min(c.rx.size(), s.remaining), 0);
                    if (r > 0) {
                        if (!sink_copy(c, c.rx.data(), static_cast<std::size_t>(r)))
                            return true;
                        moved = true;
                        if (s.remaining == 0) {
                            s.active = false;
                            c.p->stats.rx_bytes += s.h.length;
                            end_direct(c);
                            if (!deliver_held(c))
                                return true;
                        }
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
                    up_.path_failed(c, std::string("read failed: ") + std::strerror(errno));
                    return true;
                }
                std::size_t got = static_cast<std::size_t>(r);
                drained = got < s.remaining;
                s.remaining -= got;
                for (std::size_t i = 0; i < s.iov_count && got > 0; ++i) {
                    const std::size_t m = std::min(s.iov[i].iov_len, got);
                    s.iov[i].iov_base = static_cast<std::uint8_t*>(s.iov[i].iov_base) + m;
                    s.iov[i].iov_len -= m;
                    got -= m;
                }
            }
            moved = true;
            if (s.remaining == 0) {
                s.active = false;
                c.p->stats.rx_bytes += s.h.length;
                end_direct(c);
                if (!deliver_held(c))
                    return true;
            }
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
            const auto v = p.reorder.offer(h.seq, h.length);
            if (v == reorder_stage::verdict::behind || v == reorder_stage::verdict::too_far) {
                up_.path_failed(c, "frame out of sequence: got " + std::to_string(h.seq) + ", expected " +
                        std::to_string(p.reorder.expected()));
                return true;
            }
            if (v == reorder_stage::verdict::full)
                return moved; // read again once the gap is filled (another path)
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
                p.reorder.delivered();
                moved = true;
                if (!begin_direct(c, h))
                    return true;
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
        const ssize_t r = ::recv(c.fd(), c.rx.data() + c.tail, room, 0);
        if (r > 0) {
            c.tail += static_cast<std::size_t>(r);
            drained = static_cast<std::size_t>(r) < room;
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

// ---- receives --------------------------------------------------------------

ssize_t user_backend::peek(const recv_request& r)
{
    // The answer arrives as a completion: success with the message's
    // length, tag and data, or an FI_ENOMSG error.
    auto& engine = engine_for(r.tagged);
    const match::source_t source = r.src == FI_ADDR_UNSPEC ? match::any_source : r.src;
    std::optional<std::uint64_t> claim;
    if (r.flags & FI_CLAIM)
        claim = reinterpret_cast<std::uint64_t>(r.context);
    auto m = engine.peek(source, r.tag, r.ignore, claim);
    if (!m) {
        done_.peek_result(r.context, r.tagged, false, 0, 0, 0, false);
        return 0;
    }
    const auto& um = *unexpected_.at(m->cookie);
    done_.peek_result(r.context, r.tagged, true, m->length, m->tag, m->data, um.has_data);
    if ((r.flags & FI_DISCARD) && claim) {
        engine.claim(*claim);
        um.p->stats.unexpected_now--;
        unexpected_.erase(m->cookie);
    }
    return 0;
}

ssize_t user_backend::post(const recv_request& r0)
{
    recv_request r = r0;
    if (r.count > provider_iov_limit)
        return -FI_EINVAL;
    if (r.src != FI_ADDR_UNSPEC && (b_.av == nullptr || r.src >= b_.av->entries.size()))
        return -FI_EINVAL;
    if (!r.tagged) {
        r.tag = 0;
        r.ignore = ~std::uint64_t {0};
    }
    if (r.flags & FI_PEEK)
        return peek(r);
    auto& engine = engine_for(r.tagged);

    op* o = ops_.new_op();
    o->k = (r.flags & FI_MULTI_RECV) ? op::kind::multi_recv : op::kind::recv;
    o->tagged = r.tagged;
    o->completion = r.completion;
    o->context = r.context;
    o->iov_count = r.count;
    std::copy(r.iov, r.iov + r.count, o->iov.begin());
    o->length = total_length(r.iov, r.count);
    o->addr = r.src;
    o->tag = r.tag;
    o->ignore = r.ignore;

    if (r.flags & FI_CLAIM) {
        // The message an earlier FI_PEEK|FI_CLAIM reserved for this context.
        auto m = engine.claim(reinterpret_cast<std::uint64_t>(r.context));
        if (!m) {
            ops_.release(o);
            return -FI_EINVAL;
        }
        match::match_result res;
        res.recv.cookie = reinterpret_cast<std::uint64_t>(o);
        res.recv.capacity = o->length;
        res.msg = *m;
        if (r.flags & FI_DISCARD) {
            auto it = unexpected_.find(m->cookie);
            it->second->p->stats.unexpected_now--;
            unexpected_.erase(it);
            o->msg_tag = m->tag;
            o->msg_data = m->data;
            o->completion = true;
            done_.recv_done(*o);
            return 0;
        }
        matched(res);
        return 0;
    }

    if (o->k == op::kind::multi_recv && r.tagged) {
        ops_.release(o);
        return -FI_EINVAL;
    }
    match::posted_recv pr;
    pr.cookie = reinterpret_cast<std::uint64_t>(o);
    pr.source = r.src == FI_ADDR_UNSPEC ? match::any_source : r.src;
    pr.tag = r.tag;
    pr.ignore = r.ignore;
    pr.capacity = o->length;
    pr.persistent = o->k == op::kind::multi_recv;
    posted_[r.context] = o;
    // A multi-receive buffer may take several queued messages at once.
    for (;;) {
        auto res = engine.post(pr);
        if (!res)
            break;
        if (o->k != op::kind::multi_recv) {
            posted_.erase(r.context);
            matched(*res);
            break;
        }
        matched(*res);
        if (posted_.find(r.context) == posted_.end())
            break; // used up
        engine.remove_posted(pr.cookie); // post() re-queued it; try the next message
    }
    return 0;
}

ssize_t user_backend::cancel(void* context)
{
    auto it = posted_.find(context);
    if (it == posted_.end())
        return -FI_ENOENT;
    op* o = it->second;
    if (!engine_for(o->tagged).cancel(reinterpret_cast<std::uint64_t>(o)))
        return -FI_ENOENT;
    posted_.erase(it);
    done_.error(*o, FI_ECANCELED);
    return 0;
}

void user_backend::deliver_eager(peer& p, const wire::frame_header& h, const std::uint8_t* payload, bool tagged)
{
    auto& engine = engine_for(tagged);
    match::arrived_msg m;
    m.cookie = next_cookie_++;
    m.source = source_of(p);
    m.tag = h.tag;
    m.data = h.data;
    m.length = h.length;
    auto r = engine.arrive(m);
    if (r) {
        op* o = reinterpret_cast<op*>(r->recv.cookie);
        if (o->k != op::kind::multi_recv)
            posted_.erase(o->context);
        o->msg_length = h.length;
        o->msg_tag = h.tag;
        o->msg_data = h.data;
        o->p = &p;
        if (o->k == op::kind::multi_recv) {
            pack_multi_recv(*o, payload, h.length, (h.flags & wire::flag_remote_data) != 0, h.data);
            return;
        }
        o->expected = std::min(o->length, static_cast<std::size_t>(h.length));
        scatter(o->iov.data(), o->iov_count, payload, o->expected);
        o->received = o->expected;
        o->has_data = h.flags & wire::flag_remote_data;
        done_.recv_done(*o);
        return;
    }
    auto um = std::make_unique<unexpected_msg>();
    um->p = &p;
    um->payload.assign(payload, payload + h.length);
    um->has_data = h.flags & wire::flag_remote_data;
    unexpected_.emplace(m.cookie, std::move(um));
    if (p.fi_addr == FI_ADDR_NOTAVAIL)
        p.unexpected_cookies.push_back(m.cookie);
    p.stats.unexpected_max = std::max(p.stats.unexpected_max, ++p.stats.unexpected_now);
}

void user_backend::deliver_rts(peer& p, const wire::frame_header& h)
{
    const bool tagged = h.flags & wire::flag_tagged;
    auto& engine = engine_for(tagged);
    match::arrived_msg m;
    m.cookie = next_cookie_++;
    m.source = source_of(p);
    m.tag = h.tag;
    m.data = h.data;
    m.length = h.a;
    auto um = std::make_unique<unexpected_msg>();
    um->p = &p;
    um->rendezvous = true;
    um->sender_op = h.b;
    um->has_data = h.flags & wire::flag_remote_data;
    auto r = engine.arrive(m);
    unexpected_.emplace(m.cookie, std::move(um));
    if (r) {
        p.stats.unexpected_now++; // matched() takes it off again
        matched(*r);
        return;
    }
    if (p.fi_addr == FI_ADDR_NOTAVAIL)
        p.unexpected_cookies.push_back(m.cookie);
    p.stats.unexpected_max = std::max(p.stats.unexpected_max, ++p.stats.unexpected_now);
}

void user_backend::matched(const match::match_result& r)
{
    op* o = reinterpret_cast<op*>(r.recv.cookie);
    auto it = unexpected_.find(r.msg.cookie);
    std::unique_ptr<unexpected_msg> um = std::move(it->second);
    unexpected_.erase(it);
    peer& p = *um->p;
    p.stats.unexpected_now--;
    // Matched: no longer cancellable (a multi-receive buffer stays posted).
    if (o->k != op::kind::multi_recv)
        posted_.erase(o->context);
    if (o->k == op::kind::multi_recv) {
        if (um->rendezvous) {
            // A message above the eager limit cannot be packed into a
            // multi-receive buffer; MPICH's active messages never are.
            log_error("an untagged message of %zu bytes from %s does not fit a multi-receive buffer", r.msg.length,
                p.describe().c_str());
            if (!p.failed)
                up_.clear_to_send(p, um->sender_op, 0, 0);
            return;
        }
        pack_multi_recv(*o, um->payload.data(), um->payload.size(), um->has_data, r.msg.data);
        return;
    }
    o->msg_length = r.msg.length;
    o->msg_tag = r.msg.tag;
    o->msg_data = r.msg.data;
    o->has_data = um->has_data;
    o->p = &p;
    if (um->rendezvous) {
        if (p.failed) {
            done_.error(*o, FI_EIO);
            return;
        }
        start_rendezvous_recv(*o, um->sender_op, p);
        return;
    }
    o->expected = std::min(o->length, um->payload.size());
    scatter(o->iov.data(), o->iov_count, um->payload.data(), o->expected);
    o->received = o->expected;
    done_.recv_done(*o);
}

void user_backend::pack_multi_recv(
    op& o, const std::uint8_t* payload, std::size_t len, bool has_data, std::uint64_t data)
{
    // Each message goes right after the previous one; the buffer is released
    // (FI_MULTI_RECV on the completion) once less than the minimum is left.
    const std::size_t room = o.length - o.consumed;
    const std::size_t n = std::min(room, len);
    auto* at = static_cast<std::uint8_t*>(o.iov[0].iov_base) + o.consumed;
    if (n > 0)
        std::memcpy(at, payload, n);
    o.consumed += n;
    const bool used_up = o.length - o.consumed < std::max<std::size_t>(min_multi_recv_, 1);
    if (used_up) {
        untagged_.remove_posted(reinterpret_cast<std::uint64_t>(&o));
        posted_.erase(o.context);
    }
    done_.multi_recv_part(o, at, n, len, has_data, data, used_up);
}

void user_backend::start_rendezvous_recv(op& o, std::uint64_t sender_op, peer& p)
{
    o.expected = std::min(o.length, o.msg_length);
    o.received = 0;
    if (o.expected > 0)
        ops_.expect(o, op::waits::data);
    up_.clear_to_send(p, sender_op, o.id, o.expected);
    if (o.expected == 0)
        done_.recv_done(o);
}

// ---- peers -----------------------------------------------------------------

void user_backend::renumber(peer& p)
{
    tagged_.renumber_unexpected(p.unexpected_cookies, p.fi_addr);
    untagged_.renumber_unexpected(p.unexpected_cookies, p.fi_addr);
    p.unexpected_cookies.clear();
}

void user_backend::peer_failed(peer& p)
{
    if (p.fi_addr == FI_ADDR_NOTAVAIL)
        return;
    for (auto* eng : {&tagged_, &untagged_})
        for (const auto& r : eng->fail_source(p.fi_addr)) {
            op* o = reinterpret_cast<op*>(r.cookie);
            posted_.erase(o->context);
            done_.error(*o, FI_EIO);
        }
}

void user_backend::directed_sources(std::vector<fi_addr_t>& out) const
{
    // A receive directed at one source waits on it (wildcards wait on
    // nobody in particular, so they are not counted).
    for (const auto& [ctx, o] : posted_)
        if (o->k == op::kind::recv && o->addr != FI_ADDR_UNSPEC)
            out.push_back(o->addr);
}

} // namespace hashi::fi
