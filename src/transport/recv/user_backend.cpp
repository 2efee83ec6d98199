// SPDX-License-Identifier: BSD-3-Clause
// The matching half of the user-space receive backend (user_backend.hpp):
// posted receives, peek and claim, cancel, arriving messages matched or
// kept as unexpected, eager payloads copied, rendezvous receives started,
// multi-receive buffers packed. The reading half is user_reader.cpp.
#include "transport/recv/user_backend.hpp"

#include "transport/recv/recv_op.hpp"

#include "transport/send/send_scheduler.hpp"

#include "transport/common.hpp"
#include "transport/objects.hpp"

#include <algorithm>
#include <cstring>

namespace hashi::fi {

namespace {

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

    op* o = new_recv_op(ops_, r);

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

match::arrived_msg user_backend::arrival(const peer& p, const wire::frame_header& h, std::size_t length)
{
    match::arrived_msg m;
    m.cookie = next_cookie_++;
    m.source = source_of(p);
    m.tag = h.tag;
    m.data = h.data;
    m.length = length;
    return m;
}

void user_backend::deliver_eager(peer& p, const wire::frame_header& h, const std::uint8_t* payload, bool tagged)
{
    auto& engine = engine_for(tagged);
    const match::arrived_msg m = arrival(p, h, h.length);
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
    const match::arrived_msg m = arrival(p, h, h.a);
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
