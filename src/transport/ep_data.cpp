// SPDX-License-Identifier: BSD-3-Clause
// The data operations of the endpoint: sends (eager below the limit,
// rendezvous above it), receives and their matching, peek/claim, cancel,
// RMA reads and writes, and the completions all of them produce.
#include "transport/endpoint.hpp"

#include <algorithm>
#include <cstring>

namespace hashi::fi {

namespace {

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

// A private copy of a gather list, for operations whose buffer the caller
// may reuse as soon as the call returns (inject).
std::unique_ptr<std::uint8_t[]> copy_of(const iovec* iov, std::size_t count, std::size_t len)
{
    std::unique_ptr<std::uint8_t[]> copy(new std::uint8_t[len]);
    std::size_t off = 0;
    for (std::size_t i = 0; i < count; ++i) {
        std::memcpy(copy.get() + off, iov[i].iov_base, iov[i].iov_len);
        off += iov[i].iov_len;
    }
    return copy;
}

match::source_t source_of(const peer& p)
{
    return p.fi_addr == FI_ADDR_NOTAVAIL ? match::any_source : p.fi_addr;
}

} // namespace

// ---- sends ---------------------------------------------------------------

peer* endpoint::admit(const iovec* iov, std::size_t count, fi_addr_t dest, bool inject, std::size_t& len, ssize_t& err)
{
    // What every send and RMA operation checks first. Bounded queues: when
    // they are full the caller gets -FI_EAGAIN and retries after progress.
    if (!enabled_) {
        err = -FI_EOPBADSTATE;
        return nullptr;
    }
    if (count > provider_iov_limit) {
        err = -FI_EINVAL;
        return nullptr;
    }
    if (tx_queued_ >= provider_tx_size) {
        progress();
        if (tx_queued_ >= provider_tx_size) {
            err = -FI_EAGAIN;
            return nullptr;
        }
    }
    len = total_length(iov, count);
    if (inject && len > provider_inject_size) {
        err = -FI_EINVAL;
        return nullptr;
    }
    int e = 0;
    peer* p = peer_for_send(dest, e);
    err = e;
    return p;
}

ssize_t endpoint::post_send(const iovec* iov, std::size_t count, fi_addr_t dest, std::uint64_t tag, std::uint64_t data,
    bool has_data, bool tagged, bool inject, bool completion, void* context)
{
    std::size_t len = 0;
    ssize_t err = 0;
    peer* p = admit(iov, count, dest, inject, len, err);
    if (p == nullptr)
        return err;
    ++p->stats.tx_msgs;
    wire::frame_header h;
    h.tag = tagged ? tag : 0;
    h.data = has_data ? data : 0;
    h.flags = has_data ? wire::flag_remote_data : 0;
    if (inject) {
        h.type = tagged ? wire::frame_type::tagged : wire::frame_type::msg;
        h.length = len;
        std::unique_ptr<std::uint8_t[]> copy;
        iovec v {};
        if (len > 0) {
            copy = copy_of(iov, count, len);
            v = {copy.get(), len};
        }
        queue_frame(*p, h, &v, len > 0 ? 1 : 0, std::move(copy), nullptr);
        if (send_cntr_ != nullptr)
            ++send_cntr_->value;
        flush(*p);
        return 0;
    }
    op* o = new_op();
    o->k = op::kind::send;
    o->tagged = tagged;
    o->completion = completion;
    o->context = context;
    o->iov_count = count;
    std::copy(iov, iov + count, o->iov.begin());
    o->length = len;
    o->addr = dest;
    o->tag = tag;
    o->p = p;
    // Untagged messages go to multi-receive buffers, which cannot take a
    // rendezvous; MPICH's are at most 16 KiB, so they are always eager up to
    // the protocol's limit.
    const std::size_t limit = tagged ? eager_limit_ : wire::max_eager_payload;
    if (len <= limit) {
        h.type = tagged ? wire::frame_type::tagged : wire::frame_type::msg;
        h.length = len;
        queue_frame(*p, h, o->iov.data(), count, nullptr, o);
    } else {
        // Rendezvous: the payload leaves only once the receiver has matched
        // the request and answered with where it goes.
        o->id = next_op_id_++;
        rdv_sends_.emplace(o->id, o);
        h.type = wire::frame_type::rts;
        h.flags |= tagged ? wire::flag_tagged : 0;
        h.a = len;
        h.b = o->id;
        queue_frame(*p, h, nullptr, 0, nullptr, nullptr);
    }
    flush(*p);
    return 0;
}

// ---- receives ------------------------------------------------------------

ssize_t endpoint::post_recv(const iovec* iov, std::size_t count, fi_addr_t src, std::uint64_t tag, std::uint64_t ignore,
    bool tagged, std::uint64_t flags, bool completion, void* context)
{
    if (!enabled_)
        return -FI_EOPBADSTATE;
    if (count > provider_iov_limit)
        return -FI_EINVAL;
    if (src != FI_ADDR_UNSPEC && (av_ == nullptr || src >= av_->entries.size()))
        return -FI_EINVAL;
    auto& engine = tagged ? tagged_ : untagged_;
    const match::source_t source = src == FI_ADDR_UNSPEC ? match::any_source : src;
    if (!tagged) {
        tag = 0;
        ignore = ~std::uint64_t {0};
    }

    if (flags & FI_PEEK) {
        // The answer arrives as a completion: success with the message's
        // length, tag and data, or an FI_ENOMSG error.
        progress();
        std::optional<std::uint64_t> claim;
        if (flags & FI_CLAIM)
            claim = reinterpret_cast<std::uint64_t>(context);
        auto m = engine.peek(source, tag, ignore, claim);
        fi_cq_tagged_entry e {};
        e.op_context = context;
        e.flags = FI_RECV | (tagged ? FI_TAGGED : FI_MSG);
        if (!m) {
            fi_cq_err_entry err {};
            err.op_context = context;
            err.flags = e.flags;
            err.err = FI_ENOMSG;
            err.prov_errno = FI_ENOMSG;
            rx_cq_->push_error(err);
            return 0;
        }
        const auto& um = *unexpected_.at(m->cookie);
        e.len = m->length;
        e.tag = m->tag;
        e.data = m->data;
        if (um.has_data)
            e.flags |= FI_REMOTE_CQ_DATA;
        if ((flags & FI_DISCARD) && claim) {
            engine.claim(*claim);
            um.p->stats.unexpected_now--;
            unexpected_.erase(m->cookie);
        }
        rx_cq_->push(e);
        return 0;
    }

    op* o = new_op();
    o->k = (flags & FI_MULTI_RECV) ? op::kind::multi_recv : op::kind::recv;
    o->tagged = tagged;
    o->completion = completion;
    o->context = context;
    o->iov_count = count;
    std::copy(iov, iov + count, o->iov.begin());
    o->length = total_length(iov, count);
    o->addr = src;
    o->tag = tag;
    o->ignore = ignore;

    if (flags & FI_CLAIM) {
        // The message an earlier FI_PEEK|FI_CLAIM reserved for this context.
        auto m = engine.claim(reinterpret_cast<std::uint64_t>(context));
        if (!m) {
            free_op(o);
            return -FI_EINVAL;
        }
        match::match_result r;
        r.recv.cookie = reinterpret_cast<std::uint64_t>(o);
        r.recv.capacity = o->length;
        r.msg = *m;
        if (flags & FI_DISCARD) {
            auto it = unexpected_.find(m->cookie);
            it->second->p->stats.unexpected_now--;
            unexpected_.erase(it);
            o->msg_tag = m->tag;
            o->msg_data = m->data;
            o->completion = true;
            complete_recv(*o);
            return 0;
        }
        matched(r, tagged);
        return 0;
    }

    if (o->k == op::kind::multi_recv && tagged) {
        free_op(o);
        return -FI_EINVAL;
    }
    match::posted_recv pr;
    pr.cookie = reinterpret_cast<std::uint64_t>(o);
    pr.source = source;
    pr.tag = tag;
    pr.ignore = ignore;
    pr.capacity = o->length;
    pr.persistent = o->k == op::kind::multi_recv;
    posted_[context] = o;
    // A multi-receive buffer may take several queued messages at once.
    for (;;) {
        auto r = engine.post(pr);
        if (!r)
            break;
        if (o->k != op::kind::multi_recv) {
            posted_.erase(context);
            matched(*r, tagged);
            break;
        }
        matched(*r, tagged);
        if (posted_.find(context) == posted_.end())
            break; // used up
        engine.remove_posted(pr.cookie); // post() re-queued it; try the next message
    }
    return 0;
}

ssize_t endpoint::cancel(void* context)
{
    auto it = posted_.find(context);
    if (it == posted_.end())
        return -FI_ENOENT;
    op* o = it->second;
    auto& engine = o->tagged ? tagged_ : untagged_;
    if (!engine.cancel(reinterpret_cast<std::uint64_t>(o)))
        return -FI_ENOENT;
    posted_.erase(it);
    complete_error(*o, FI_ECANCELED, 0, rx_cq_);
    return 0;
}

void endpoint::deliver_eager(peer& p, const wire::frame_header& h, const std::uint8_t* payload, bool tagged)
{
    auto& engine = tagged ? tagged_ : untagged_;
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
        complete_recv(*o);
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

void endpoint::deliver_rts(peer& p, const wire::frame_header& h)
{
    const bool tagged = h.flags & wire::flag_tagged;
    auto& engine = tagged ? tagged_ : untagged_;
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
    if (r) {
        unexpected_.emplace(m.cookie, std::move(um));
        p.stats.unexpected_now++; // matched() takes it off again
        matched(*r, tagged);
        return;
    }
    unexpected_.emplace(m.cookie, std::move(um));
    if (p.fi_addr == FI_ADDR_NOTAVAIL)
        p.unexpected_cookies.push_back(m.cookie);
    p.stats.unexpected_max = std::max(p.stats.unexpected_max, ++p.stats.unexpected_now);
}

void endpoint::matched(const match::match_result& r, bool /*tagged*/)
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
                queue_control(p, wire::frame_type::cts, um->sender_op, 0, 0);
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
            complete_error(*o, FI_EIO, 0, rx_cq_);
            return;
        }
        start_rendezvous_recv(*o, um->sender_op, p);
        return;
    }
    o->expected = std::min(o->length, um->payload.size());
    scatter(o->iov.data(), o->iov_count, um->payload.data(), o->expected);
    o->received = o->expected;
    complete_recv(*o);
}

void endpoint::pack_multi_recv(op& o, const std::uint8_t* payload, std::size_t len, bool has_data, std::uint64_t data)
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
    std::uint64_t flags = FI_RECV | FI_MSG | (has_data ? FI_REMOTE_CQ_DATA : 0);
    if (used_up) {
        untagged_.remove_posted(reinterpret_cast<std::uint64_t>(&o));
        posted_.erase(o.context);
        flags |= FI_MULTI_RECV;
    }
    if (n < len) {
        fi_cq_err_entry e {};
        e.op_context = o.context;
        e.flags = flags;
        e.len = n;
        e.buf = at;
        e.data = data;
        e.olen = len - n;
        e.err = FI_ETRUNC;
        e.prov_errno = FI_ETRUNC;
        rx_cq_->push_error(e);
    } else {
        fi_cq_tagged_entry e {};
        e.op_context = o.context;
        e.flags = flags;
        e.len = n;
        e.buf = at;
        e.data = data;
        rx_cq_->push(e);
    }
    if (recv_cntr_ != nullptr)
        ++recv_cntr_->value;
    if (used_up)
        free_op(&o);
}

void endpoint::start_rendezvous_recv(op& o, std::uint64_t sender_op, peer& p)
{
    o.expected = std::min(o.length, o.msg_length);
    o.received = 0;
    o.id = next_op_id_++;
    if (o.expected > 0)
        rdv_recvs_.emplace(o.id, &o);
    queue_control(p, wire::frame_type::cts, sender_op, o.id, o.expected);
    flush(p);
    if (o.expected == 0)
        complete_recv(o);
}

// ---- RMA -----------------------------------------------------------------

ssize_t endpoint::post_rma(op::kind k, const iovec* iov, std::size_t count, fi_addr_t dest, std::uint64_t raddr,
    std::uint64_t key, bool inject, bool completion, void* context)
{
    std::size_t len = 0;
    ssize_t err = 0;
    peer* p = admit(iov, count, dest, inject, len, err);
    if (p == nullptr)
        return err;
    op* o = new_op();
    o->k = k;
    o->completion = completion;
    o->context = context;
    o->counted = true;
    o->iov_count = count;
    std::copy(iov, iov + count, o->iov.begin());
    o->length = len;
    o->addr = dest;
    o->p = p;
    o->key = key;
    o->raddr = raddr;
    o->id = next_op_id_++;
    rma_ops_.emplace(o->id, o);
    if (k == op::kind::read) {
        wire::frame_header h;
        h.type = wire::frame_type::rma_read_req;
        h.a = key;
        h.b = raddr;
        h.c = o->id;
        h.tag = len;
        queue_frame(*p, h, nullptr, 0, nullptr, nullptr);
        flush(*p);
        return 0;
    }
    if (inject && len > 0) {
        o->owned = copy_of(iov, count, len);
        o->iov[0] = {o->owned.get(), len};
        o->iov_count = 1;
    }
    // One frame per chunk; the write completes when the target has
    // acknowledged every one (delivery complete).
    o->expected = 0;
    std::size_t off = 0;
    do {
        const std::size_t n = std::min(chunk_size_, len - off);
        wire::frame_header h;
        h.type = wire::frame_type::rma_write;
        h.a = key;
        h.b = raddr + off;
        h.c = o->id;
        h.length = n;
        std::array<iovec, provider_iov_limit> part {};
        const std::size_t k2 = slice(o->iov.data(), o->iov_count, off, n, part);
        queue_frame(*p, h, part.data(), k2, nullptr, nullptr);
        ++o->expected;
        off += n;
    } while (off < len);
    flush(*p);
    return 0;
}

// ---- completions -----------------------------------------------------------

void endpoint::post_cq(cq_obj* cq, const op& o, std::uint64_t flags, std::size_t len, void* buf)
{
    fi_cq_tagged_entry e {};
    e.op_context = o.context;
    e.flags = flags;
    e.len = len;
    e.buf = buf;
    e.data = o.msg_data;
    e.tag = o.msg_tag;
    cq->push(e);
}

void endpoint::complete_send(op& o)
{
    if (o.completion)
        post_cq(tx_cq_, o, FI_SEND | (o.tagged ? FI_TAGGED : FI_MSG), 0, nullptr);
    if (send_cntr_ != nullptr)
        ++send_cntr_->value;
    free_op(&o);
}

void endpoint::complete_recv(op& o)
{
    if (o.expected < o.msg_length) {
        complete_error(o, FI_ETRUNC, o.msg_length - o.expected, rx_cq_);
        return;
    }
    if (o.completion) {
        const std::uint64_t flags = FI_RECV | (o.tagged ? FI_TAGGED : FI_MSG) | (o.has_data ? FI_REMOTE_CQ_DATA : 0);
        post_cq(rx_cq_, o, flags, o.received, o.iov_count > 0 ? o.iov[0].iov_base : nullptr);
    }
    if (recv_cntr_ != nullptr)
        ++recv_cntr_->value;
    free_op(&o);
}

void endpoint::complete_rma(op& o, int status)
{
    cntr_obj* c = o.k == op::kind::read ? read_cntr_ : write_cntr_;
    if (status != 0) {
        log_error("RMA %s of %zu bytes at %s failed: %s", o.k == op::kind::read ? "read" : "write", o.length,
            o.p->describe().c_str(), fi_strerror(-status));
        if (c != nullptr)
            ++c->errors;
        fi_cq_err_entry e {};
        e.op_context = o.context;
        e.flags = FI_RMA | (o.k == op::kind::read ? FI_READ : FI_WRITE);
        e.err = -status;
        e.prov_errno = -status;
        tx_cq_->push_error(e);
        free_op(&o);
        return;
    }
    if (c != nullptr && o.counted)
        ++c->value;
    if (o.completion)
        post_cq(tx_cq_, o, FI_RMA | (o.k == op::kind::read ? FI_READ : FI_WRITE), 0, nullptr);
    free_op(&o);
}

void endpoint::complete_error(op& o, int err, std::size_t olen, cq_obj* cq)
{
    fi_cq_err_entry e {};
    e.op_context = o.context;
    switch (o.k) {
    case op::kind::send:
        e.flags = FI_SEND | (o.tagged ? FI_TAGGED : FI_MSG);
        break;
    case op::kind::read:
        e.flags = FI_RMA | FI_READ;
        break;
    case op::kind::write:
        e.flags = FI_RMA | FI_WRITE;
        break;
    default:
        e.flags = FI_RECV | (o.tagged ? FI_TAGGED : FI_MSG) | (o.has_data ? FI_REMOTE_CQ_DATA : 0);
        break;
    }
    e.len = o.received;
    e.buf = o.iov_count > 0 ? o.iov[0].iov_base : nullptr;
    e.data = o.msg_data;
    e.tag = o.msg_tag;
    e.olen = olen;
    e.err = err;
    e.prov_errno = err;
    cq->push_error(e);
    cntr_obj* c = (o.k == op::kind::send)                   ? send_cntr_
        : (o.k == op::kind::read || o.k == op::kind::write) ? nullptr
                                                            : recv_cntr_;
    if (c != nullptr)
        ++c->errors;
    free_op(&o);
}

} // namespace hashi::fi
