// SPDX-License-Identifier: BSD-3-Clause
// The sending side of the protocol: eager sends below the limit, the
// rendezvous above it, RMA reads and writes, and what the engine answers
// to the frames that serve them (clear-to-send, RMA requests and acks,
// goodbyes). Frames go to the peer's send scheduler; flush() writes them.
#include "transport/common.hpp"
#include "transport/engine/engine.hpp"
#include "transport/objects.hpp"
#include "transport/path/path.hpp"

#include <algorithm>
#include <cstring>

namespace hashi::fi {

namespace {

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

tx_frame frame_of(const wire::frame_header& h, const iovec* iov, std::size_t iov_count, op* done)
{
    tx_frame f;
    f.h = h;
    f.iov_count = static_cast<std::uint8_t>(iov_count);
    for (std::size_t i = 0; i < iov_count; ++i)
        f.iov[i] = iov[i];
    f.done = done;
    return f;
}

} // namespace

void engine::queue(peer& p, send_scheduler::lane l, tx_frame&& f)
{
    p.sched.push(l, std::move(f));
    ++tx_queued_;
}

void engine::queue(peer& p, send_scheduler::lane l, transfer&& t)
{
    p.sched.push(l, std::move(t));
    ++tx_queued_;
}

void engine::queue_control(peer& p, wire::frame_type type, std::uint64_t a, std::uint64_t b, std::uint64_t c)
{
    wire::frame_header h;
    h.type = type;
    h.a = a;
    h.b = b;
    h.c = c;
    // A goodbye follows everything this endpoint asked of the peer.
    const auto l = type == wire::frame_type::bye ? send_scheduler::lane::message : send_scheduler::lane::control;
    queue(p, l, frame_of(h, nullptr, 0, nullptr));
}

peer* engine::admit(const iovec* iov, std::size_t count, fi_addr_t dest, bool inject, std::size_t& len, ssize_t& err)
{
    // What every send and RMA operation checks first. Bounded queues: when
    // they are full the caller gets -FI_EAGAIN and retries after progress.
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
    peer* p = peers_.for_index(dest, b_.av != nullptr ? b_.av->entries : std::vector<endpoint_address> {}, e);
    if (p == nullptr) {
        err = e;
        return nullptr;
    }
    paths_.ensure_path(*p);
    if (p->failed) {
        err = -FI_EIO;
        return nullptr;
    }
    return p;
}

ssize_t engine::post_send(const iovec* iov, std::size_t count, fi_addr_t dest, std::uint64_t tag, std::uint64_t data,
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
        // A send of a burst may be held and written with the ones after it
        // (engine/send_coalescing.hpp); what is held goes first when the
        // policy says so, the queue keeps each peer's order.
        bool release_first = false;
        const std::uint64_t now = monotonic_ns();
        const bool hold = coalescing_.on_send(now, len, release_first);
        if (release_first)
            write_held_peers(); // the policy has counted the release
        h.type = tagged ? wire::frame_type::tagged : wire::frame_type::msg;
        h.length = len;
        tx_frame f;
        f.h = h;
        if (len > 0) {
            f.owned = copy_of(iov, count, len);
            f.iov[0] = {f.owned.get(), len};
            f.iov_count = 1;
        }
        queue(*p, send_scheduler::lane::message, std::move(f));
        done_.inject_done();
        if (hold) {
            hold_for(*p, now);
            return 0;
        }
        flush(*p);
        return 0;
    }
    op* o = ops_.new_op();
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
    // A tagged message that would be striped (a peer with several trunks)
    // takes the rendezvous even below the eager limit: an eager message is
    // one frame, which only one path can carry.
    std::size_t limit = tagged ? settings_.eager_limit : wire::max_eager_payload;
    if (tagged && settings_.stripe_min != 0 && len >= settings_.stripe_min && router_.lanes(*p) > 1)
        limit = std::min(limit, settings_.stripe_min - 1);
    if (len <= limit) {
        // Eager: one frame, which coalescing may hold like an inject's; the
        // send completes when it is written.
        bool release_first = false;
        const std::uint64_t now = monotonic_ns();
        const bool hold = coalescing_.on_send(now, len, release_first);
        if (release_first)
            write_held_peers(); // the policy has counted the release
        h.type = tagged ? wire::frame_type::tagged : wire::frame_type::msg;
        h.length = len;
        queue(*p, send_scheduler::lane::message, frame_of(h, o->iov.data(), count, o));
        if (hold) {
            hold_for(*p, now);
            return 0;
        }
    } else {
        release_held();
        // Rendezvous: the payload leaves only once the receiver has matched
        // the request and answered with where it goes.
        ops_.expect(*o, op::waits::cts);
        h.type = wire::frame_type::rts;
        h.flags |= tagged ? wire::flag_tagged : 0;
        h.a = len;
        h.b = o->id;
        queue(*p, send_scheduler::lane::message, frame_of(h, nullptr, 0, nullptr));
    }
    flush(*p);
    return 0;
}

ssize_t engine::post_rma(op::kind k, const iovec* iov, std::size_t count, fi_addr_t dest, std::uint64_t raddr,
    std::uint64_t key, bool inject, bool completion, void* context)
{
    release_held();
    std::size_t len = 0;
    ssize_t err = 0;
    peer* p = admit(iov, count, dest, inject, len, err);
    if (p == nullptr)
        return err;
    op* o = ops_.new_op();
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
    ops_.expect(*o, op::waits::rma);
    if (k == op::kind::read) {
        wire::frame_header h;
        h.type = wire::frame_type::rma_read_req;
        h.a = key;
        h.b = raddr;
        h.c = o->id;
        h.tag = len;
        queue(*p, send_scheduler::lane::message, frame_of(h, nullptr, 0, nullptr));
        flush(*p);
        return 0;
    }
    if (inject && len > 0) {
        o->owned = copy_of(iov, count, len);
        o->iov[0] = {o->owned.get(), len};
        o->iov_count = 1;
    }
    // One frame per chunk, cut as they leave; the write completes when the
    // target has acknowledged every one (delivery complete).
    transfer t;
    t.type = wire::frame_type::rma_write;
    t.a = key;
    t.base = raddr;
    t.c = o->id;
    t.iov = o->iov;
    t.iov_count = o->iov_count;
    t.total = len;
    o->expected = std::max<std::size_t>(1, (len + settings_.chunk_size - 1) / settings_.chunk_size);
    queue(*p, send_scheduler::lane::message, std::move(t));
    flush(*p);
    return 0;
}

// ---- answers to the peer's frames --------------------------------------------

void engine::clear_to_send(peer& to, std::uint64_t sender_op, std::uint64_t receiver_op, std::uint64_t bytes)
{
    queue_control(to, wire::frame_type::cts, sender_op, receiver_op, bytes);
    flush(to);
}

void engine::rma_write_landed(peer& from, const wire::frame_header& h, int status)
{
    queue_control(from, wire::frame_type::rma_write_ack, h.c, 0, static_cast<std::uint64_t>(status));
    flush(from);
}

void engine::rma_read_done(op& o)
{
    done_.rma_done(o, 0);
}

bool engine::control_frame(path& via, peer& p, const wire::frame_header& h)
{
    switch (h.type) {
    case wire::frame_type::cts: {
        op* o = ops_.find(h.a, op::waits::cts, &p);
        if (o == nullptr || h.c > o->length) {
            path_failed(via, "clear-to-send for an unknown rendezvous or with a bad length");
            return false;
        }
        ops_.settle(*o);
        if (h.c == 0) {
            done_.send_done(*o);
            return true;
        }
        // The data leaves chunk by chunk from a cursor; the send completes
        // when the last chunk is written.
        transfer t;
        t.type = wire::frame_type::data;
        t.a = h.b;
        t.iov = o->iov;
        t.iov_count = o->iov_count;
        t.total = h.c;
        t.done = o;
        queue(p, send_scheduler::lane::data, std::move(t));
        flush(p);
        return true;
    }
    case wire::frame_type::rma_write_ack: {
        op* o = ops_.find(h.a, op::waits::rma, &p);
        if (o == nullptr || o->k != op::kind::write) {
            path_failed(via, "RMA write acknowledgement for an unknown operation");
            return false;
        }
        const int status = static_cast<int>(static_cast<std::int64_t>(h.c));
        if (status != 0 || --o->expected == 0)
            done_.rma_done(*o, status);
        return true;
    }
    case wire::frame_type::rma_read_req: {
        ++p.stats.rma_ops;
        // h.a key, h.b offset, h.c initiator's op, h.tag length wanted.
        const std::uint64_t len = h.tag;
        mr_obj* r = nullptr;
        const int status = check_region(domain_, h.a, FI_REMOTE_READ, h.b, len, r);
        if (status != 0) {
            log_warn("refused an RMA read from %s: %s (key %llu)", p.describe().c_str(), fi_strerror(-status),
                static_cast<unsigned long long>(h.a));
            queue_control(p, wire::frame_type::rma_read_resp, h.c, 0, static_cast<std::uint64_t>(status));
        } else if (len == 0) {
            queue_control(p, wire::frame_type::rma_read_resp, h.c, 0, 0);
        } else {
            transfer t;
            t.type = wire::frame_type::rma_read_resp;
            t.a = h.c;
            t.iov[0] = {r->base + h.b, len};
            t.iov_count = 1;
            t.total = len;
            queue(p, send_scheduler::lane::data, std::move(t));
        }
        flush(p);
        return true;
    }
    case wire::frame_type::rma_read_resp: {
        // Only an error answer or an empty read arrives without payload.
        op* o = ops_.find(h.a, op::waits::rma, &p);
        if (o == nullptr || o->k != op::kind::read) {
            path_failed(via, "RMA read response for an unknown operation");
            return false;
        }
        const int status = static_cast<int>(static_cast<std::int64_t>(h.c));
        if (status == 0 && o->length != 0) {
            path_failed(via, "empty RMA read response for a non-empty read");
            return false;
        }
        done_.rma_done(*o, status);
        return true;
    }
    case wire::frame_type::bye:
        via.bye_received = true;
        return true;
    default:
        path_failed(via, std::string("unexpected ") + wire::frame_type_name(h.type) + " frame");
        return false;
    }
}

} // namespace hashi::fi
