// SPDX-License-Identifier: BSD-3-Clause
// The o2g receive backend (kernel_backend.hpp).
#include "transport/recv/kernel_backend.hpp"

#include "transport/common.hpp"
#include "transport/objects.hpp"
#include "transport/path/path.hpp"
#include "transport/recv/recv_op.hpp"

#include "common/environment.hpp"

#include <fcntl.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace hashi::fi {

namespace {

// What the module names a posted receive by: the op itself.
std::uint64_t cookie_of(const op* o) { return reinterpret_cast<std::uintptr_t>(o); }

// The module's view of a tagged receive: an ioctl's o2g_recv or a posting
// ring's o2g_post, which share these fields.
template <class Desc> Desc describe_recv(const op* o, const recv_request& r)
{
    Desc d {};
    d.cookie = cookie_of(o);
    d.source = r.src == FI_ADDR_UNSPEC ? O2G_ANY_SOURCE : r.src;
    d.tag = r.tag;
    d.ignore = r.ignore;
    d.addr = r.count ? reinterpret_cast<std::uintptr_t>(r.iov[0].iov_base) : 0;
    d.len = r.count ? r.iov[0].iov_len : 0;
    return d;
}

} // namespace

kernel_backend::kernel_backend(domain_obj& domain, const bindings& b, peer_table& peers, operations& ops,
    completions& done, receive_events& up, const std::size_t& min_multi_recv, progress_loop& loop)
    : ops_(ops), done_(done), b_(b), up_(up), user_(domain, b, peers, ops, done, up, min_multi_recv)
{
    std::string err;
    const auto ring = env_switch("FI_HASHI_O2G_POST_RING", true, err);
    if (!ring)
        throw std::runtime_error(err);
    use_post_ring_ = *ring;
    ring_reg_ = loop.watch(dev_.fd(), &ring_watch_, EPOLLIN);
}

kernel_backend::~kernel_backend()
{
    // The module holds its own reference to each attached socket until
    // the device (a member, closed after this body) gives them all back.
    for (auto& [sock, a] : by_sock_)
        ::close(sock);
}

kernel_backend::attached_path* kernel_backend::find(path& c)
{
    for (auto& [sock, a] : by_sock_)
        if (a.c == &c)
            return &a;
    return nullptr;
}

void kernel_backend::attach(path& c)
{
    user_.attach(c);
    if (c.stream) {
        // The module reads plain TCP only; sealed frames it cannot parse.
        up_.path_failed(c, "FI_HASHI_RECV=kernel cannot read a protected stream (FI_HASHI_WAN_PROTECTION or "
                           "FI_HASHI_PROTECT_LOCAL is on): use FI_HASHI_RECV=user");
        return;
    }
    // The module keeps a reference to the socket while attached; our
    // duplicate names it for DETACH even after the path closed its own.
    const int sock = ::fcntl(c.fd(), F_DUPFD_CLOEXEC, 0);
    if (sock < 0) {
        up_.path_failed(c, std::string("cannot duplicate the socket for o2g: ") + std::strerror(errno));
        return;
    }
    auto& a = by_sock_[sock];
    a.c = &c;
    a.sock = sock;
    a.r = reader::catch_up_to_attach;
    catch_up(a);
}

void kernel_backend::detach(path& c)
{
    if (auto* a = find(c))
        forget(*a);
}

void kernel_backend::forget(attached_path& a)
{
    const int sock = a.sock;
    if (a.r == reader::kernel || a.r == reader::catch_up_to_resume)
        dev_.detach(sock); // -ENOENT once the context gave it back itself
    a.c->read_budget = path::unlimited;
    ::close(sock);
    by_sock_.erase(sock);
}

// Bytes still to come from the socket before the frame being read ends,
// given what the path holds; 0 at a frame boundary.
std::size_t kernel_backend::bytes_to_frame_end(const path& c) const
{
    const std::size_t avail = c.tail - c.head;
    if (c.sink.active)
        return c.sink.remaining > avail ? c.sink.remaining - avail : 0;
    if (avail == 0)
        return 0;
    if (avail < wire::header_size)
        return wire::header_size - avail;
    auto d = wire::decode_header(&c.rx[c.head]);
    const auto* h = std::get_if<wire::frame_header>(&d);
    const std::size_t whole = wire::header_size + (h != nullptr ? h->length : 0);
    return whole > avail ? whole - avail : 0;
}

// Lets the user backend read the stream up to the next frame boundary,
// never past it, then gives the stream to the module. True if anything moved.
bool kernel_backend::catch_up(attached_path& a)
{
    path& c = *a.c;
    bool moved = false;
    for (;;) {
        // What the path holds already, without reading.
        c.read_budget = 0;
        if (user_.on_readable(c))
            moved = true;
        if (c.st != path::state::open)
            return true; // closed: detach() forgot it
        const std::size_t need = bytes_to_frame_end(c);
        if (need == 0 && c.head == c.tail && !c.sink.active)
            break;
        c.read_budget = need;
        if (user_.on_readable(c))
            moved = true;
        if (c.st != path::state::open)
            return true;
        if (c.read_budget > 0)
            return moved; // the socket has no more yet: epoll tells when
    }
    c.read_budget = 0; // the module's from here
    const bool attaching = a.r == reader::catch_up_to_attach;
    const std::uint64_t source = c.p != nullptr && c.p->fi_addr != FI_ADDR_NOTAVAIL ? c.p->fi_addr : O2G_ANY_SOURCE;
    const int e = attaching ? dev_.attach(a.sock, source, O2G_ATTACH_HANDOFF | O2G_ATTACH_TAGGED_ONLY)
                            : dev_.resume(a.sock);
    if (e != 0) {
        up_.path_failed(c, std::string("the o2g module refused to ") + (attaching ? "attach" : "resume") +
                " the connection: " + std::strerror(-e) + (e == -ENOSPC ? " (module parameter max_sockets)" : ""));
        return true;
    }
    a.r = reader::kernel;
    return true;
}

bool kernel_backend::on_readable(path& c)
{
    auto* a = find(c);
    if (a == nullptr)
        return user_.on_readable(c);
    switch (a->r) {
    case reader::kernel:
        return false; // epoll saw bytes the module has not taken yet
    case reader::user:
        return user_.on_readable(c);
    default:
        return catch_up(*a);
    }
}

void kernel_backend::socket_event(const o2g_completion& e)
{
    auto it = by_sock_.find(static_cast<int>(e.cookie));
    if (it == by_sock_.end())
        return; // a path forgotten meanwhile
    attached_path& a = it->second;
    path& c = *a.c;
    if (!(e.flags & O2G_CQE_HANDOFF)) {
        // The stream ended or broke (ECONNRESET), or a header was bad
        // (EPROTO): the user backend reads the rest and says which.
        dev_.detach(a.sock);
        a.r = reader::user;
        if (e.status == EPROTO) {
            up_.path_failed(c, "a malformed frame header (the o2g module refused it; see its bad_header counter)");
            return;
        }
        c.read_budget = path::unlimited;
        user_.on_readable(c);
        return;
    }
    o2g_handoff h {};
    h.fd = a.sock;
    if (const int err = dev_.take_frame(h); err != 0) {
        up_.path_failed(c, std::string("o2g handed a frame over but will not give it: ") + std::strerror(-err));
        return;
    }
    auto d = wire::decode_header(h.header);
    const auto* fh = std::get_if<wire::frame_header>(&d);
    if (fh == nullptr) {
        up_.path_failed(c, "a bad frame header: " + std::get<wire::decode_error>(d).reason);
        return;
    }
    if (fh->type == wire::frame_type::rts && (fh->flags & wire::flag_tagged)) {
        up_.path_failed(c, "a tagged message of " + std::to_string(fh->a) +
                " bytes came by rendezvous, which FI_HASHI_RECV=kernel does not match yet: raise "
                "FI_HASHI_EAGER_SIZE (up to 1048576) on the senders, or use FI_HASHI_RECV=user");
        return;
    }
    // The module delivered the frames before it in order: the user
    // backend's sequence check starts again from this one.
    if (c.p != nullptr)
        c.p->reorder.resync(fh->seq);
    if (c.rx.size() < c.tail + wire::header_size)
        c.rx.resize(c.tail + wire::header_size);
    std::memcpy(&c.rx[c.tail], h.header, wire::header_size);
    c.tail += wire::header_size;
    a.r = reader::catch_up_to_resume;
    catch_up(a);
}

void kernel_backend::completed(op& o, const o2g_completion& e)
{
    by_context_.erase(o.context);
    posted_ops_.erase(&o);
    if (e.status != 0) {
        // EFAULT: the buffer was unmapped before the message came (or, for
        // a receive the posting ring refused, never mapped); ECONNRESET: its
        // connection broke mid-message; ECANCELED: cancelled in the ring.
        if (e.flags & O2G_CQE_REFUSED)
            log_error("o2g refused a receive of %zu bytes posted through its ring: %s", o.length,
                std::strerror(static_cast<int>(e.status)));
        done_.error(o, e.status == EFAULT ? FI_EFAULT
                : e.status == ECANCELED    ? FI_ECANCELED
                : e.status == EAGAIN       ? FI_EAGAIN
                                           : FI_EIO);
        return;
    }
    o.msg_length = e.length;
    o.msg_tag = e.tag;
    o.msg_data = e.data;
    o.has_data = (e.flags & O2G_CQE_REMOTE_DATA) != 0;
    o.expected = e.received;
    o.received = e.received;
    done_.recv_done(o); // a truncated message ends as FI_ETRUNC there
}

bool kernel_backend::poll()
{
    bool moved = false;
    while (auto e = dev_.next()) {
        moved = true;
        if (e->flags & O2G_CQE_SOCKET) {
            socket_event(*e);
            continue;
        }
        op* o = reinterpret_cast<op*>(static_cast<std::uintptr_t>(e->cookie));
        // Only cookies we posted come back; anything else is not ours to touch.
        if (!posted_ops_.contains(o)) {
            log_error("o2g completed a receive this endpoint did not post (cookie %llx)",
                static_cast<unsigned long long>(e->cookie));
            continue;
        }
        completed(*o, *e);
    }
    return moved;
}

ssize_t kernel_backend::post(const recv_request& r)
{
    if (!r.tagged || (r.flags & FI_MULTI_RECV))
        return user_.post(r);
    if (r.flags & (FI_PEEK | FI_CLAIM)) {
        log_error("FI_HASHI_RECV=kernel does not peek or claim tagged messages yet (MPI_Probe, MPI_Mprobe): "
                  "use FI_HASHI_RECV=user");
        return -FI_ENOSYS;
    }
    if (r.count > 1) {
        log_error("FI_HASHI_RECV=kernel takes tagged receives of one buffer only (got %zu)", r.count);
        return -FI_EINVAL;
    }
    if (r.src != FI_ADDR_UNSPEC && (b_.av == nullptr || r.src >= b_.av->entries.size()))
        return -FI_EINVAL;
    op* o = new_recv_op(ops_, r);

    if (ring_has_room()) {
        auto p = describe_recv<o2g_post>(o, r);
        p.op = O2G_POST_RECV;
        by_context_[r.context] = o;
        posted_ops_.insert(o);
        if (dev_.ring_post(p))
            return 0; // its completion (or refusal) comes through the completion ring
        by_context_.erase(r.context);
        posted_ops_.erase(o);
    }

    auto k = describe_recv<o2g_recv>(o, r);
    const int e = dev_.post(k);
    if (e != 0) {
        ops_.release(o);
        if (e == -EAGAIN)
            return -FI_EAGAIN; // the ring or max_posted is full: progress, then again
        log_error("o2g refused a receive of %zu bytes: %s", o->length, std::strerror(-e));
        return e == -EFAULT ? -FI_EFAULT : -FI_EINVAL;
    }
    by_context_[r.context] = o;
    posted_ops_.insert(o);
    if (k.result == O2G_RESULT_MATCH)
        completed(*o, k.done); // it was there already, and is copied now
    return 0;
}

// May one more receive go through the posting ring? Only while the module
// could not refuse it for room: every receive we have in the module, its
// completion, the unread ones and two slots per socket (the module's own
// bound, o2g_recv.c) still fit the completion ring.
bool kernel_backend::ring_has_room() const noexcept
{
    if (!use_post_ring_ || !dev_.has_post_ring())
        return false;
    const std::uint64_t mine = by_context_.size() + 1;
    return mine <= dev_.max_posted() && mine + dev_.unread() + 2 * by_sock_.size() < dev_.ring_entries();
}

ssize_t kernel_backend::cancel(void* context)
{
    auto it = by_context_.find(context);
    if (it == by_context_.end())
        return user_.cancel(context);
    op* o = it->second;
    o2g_cancel c {};
    c.cookie = cookie_of(o);
    if (dev_.cancel(c) != 0 || c.result != O2G_RESULT_TRUE)
        return -FI_ENOENT; // matched already: its completion is in the ring
    by_context_.erase(it);
    posted_ops_.erase(o);
    done_.error(*o, FI_ECANCELED);
    return 0;
}

void kernel_backend::peer_failed(peer& p)
{
    user_.peer_failed(p);
    if (p.fi_addr == FI_ADDR_NOTAVAIL)
        return;
    std::vector<op*> waiting;
    for (const auto& [ctx, o] : by_context_)
        if (o->addr == p.fi_addr)
            waiting.push_back(o);
    for (op* o : waiting) {
        o2g_cancel c {};
        c.cookie = cookie_of(o);
        if (dev_.cancel(c) == 0 && c.result == O2G_RESULT_TRUE) {
            by_context_.erase(o->context);
            posted_ops_.erase(o);
            done_.error(*o, FI_EIO);
        }
    }
}

void kernel_backend::directed_sources(std::vector<fi_addr_t>& out) const
{
    user_.directed_sources(out);
    for (const auto& [ctx, o] : by_context_)
        if (o->addr != FI_ADDR_UNSPEC)
            out.push_back(o->addr);
}

std::size_t kernel_backend::unexpected() const noexcept
{
    o2g_stats s {};
    return user_.unexpected() + (dev_.stats(s) == 0 ? s.unexpected : 0);
}

} // namespace hashi::fi
