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
template <class Desc>
Desc describe_recv(const op* o, const recv_request& r, std::pair<std::uintptr_t, std::size_t> buffer)
{
    Desc d {};
    d.cookie = cookie_of(o);
    d.source = r.src == FI_ADDR_UNSPEC ? O2G_ANY_SOURCE : r.src;
    d.tag = r.tag;
    d.ignore = r.ignore;
    d.addr = buffer.first;
    d.len = buffer.second;
    return d;
}

// What MPI_Improbe reserved a message for, and MPI_Mrecv takes it by: the
// receive's context, as in the user backend.
std::uint64_t claim_of(const void* context) { return reinterpret_cast<std::uintptr_t>(context); }

// KiB in `pages` pages.
std::uint64_t kib_of(std::uint64_t pages)
{
    return pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)) / 1024;
}

} // namespace

// What to add to a refusal the module gave for a receive's memory.
std::string kernel_backend::refusal_hint(int err) const
{
    if (err == EOPNOTSUPP)
        return " (the buffer is in a shared mapping of a file, which the module may not write into: "
               "use FI_HASHI_RECV=user)";
    if (err == ENOMEM && dev_.memlock_pages() != O2G_MEMLOCK_UNLIMITED)
        return " (the pages o2g pins count against RLIMIT_MEMLOCK, " + std::to_string(kib_of(dev_.memlock_pages())) +
            " KiB for this process, and were used up: raise it, ulimit -l unlimited or memlock in "
            "/etc/security/limits.conf as for RDMA, or use FI_HASHI_RECV=user)";
    return "";
}

std::string kernel_backend::pin_limit_problem() const
{
    const std::uint64_t limit = dev_.memlock_pages();
    if (limit == O2G_MEMLOCK_UNLIMITED)
        return "";
    // The module pins at most 1 MiB of a receive's buffer (and the pages
    // its ends straddle), and holds at most max_posted receives.
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    const std::uint64_t need = dev_.max_posted() * ((std::uint64_t {1} << 20) / page + 1);
    if (limit >= need)
        return "";
    return "the o2g module pins receive buffers against RLIMIT_MEMLOCK, and this process's (" +
        std::to_string(kib_of(limit)) + " KiB) is below the " + std::to_string(kib_of(need)) +
        " KiB that its " + std::to_string(dev_.max_posted()) +
        " posted receives may pin: a receive would fail when they are used up (raise it: ulimit -l unlimited, or "
        "memlock in /etc/security/limits.conf, as for RDMA)";
}

kernel_backend::kernel_backend(domain_obj& domain, const bindings& b, peer_table& peers, operations& ops,
    completions& done, receive_events& up, const std::size_t& min_multi_recv, progress_loop& loop)
    : ops_(ops), peers_(peers), done_(done), b_(b), up_(up), user_(domain, b, peers, ops, done, up, min_multi_recv)
{
    std::string err;
    const auto ring = env_switch("FI_HASHI_O2G_POST_RING", true, err);
    if (!ring)
        throw std::runtime_error(err);
    use_post_ring_ = *ring;
    const auto first = env_switch("FI_HASHI_O2G_RING_FIRST", true, err);
    if (!first)
        throw std::runtime_error(err);
    ring_first_ = *first;
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
    if (e == -ENOTCONN && attaching) {
        // The peer ended the stream (its FIN or a reset) before the module
        // could take it: there is nothing left to match in the kernel. The
        // user backend reads the frames still queued and then the end, as
        // for any stream, so none is lost and an orderly close stays quiet
        // (seen in MPICH's rqfreeb at MPI_Finalize in the o2g VM).
        HASHI_DEBUG("o2g: fd %d ended before it could be attached; read in user space", a.sock);
        a.r = reader::user;
        c.read_budget = path::unlimited;
        user_.on_readable(c); // may close the path, which forgets `a`
        return true;
    }
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
    if (a.r != reader::kernel)
        return; // stale (below): the module hands over only a socket it holds
    o2g_handoff h {};
    h.fd = a.sock;
    if (const int err = dev_.take_frame(h); err != 0) {
        // EAGAIN: the module holds the socket, nothing is handed over. The
        // event is stale: completions name a socket by its descriptor, and
        // one that was closed (a simultaneous connect's loser) can have
        // left a handoff in the ring that the path now holding that number
        // reads. A handoff to come brings an event of its own. Seen once
        // in MPICH's precv_anysrc in the o2g VM, which failed the peer.
        if (err == -EAGAIN) {
            HASHI_DEBUG("o2g: a stale handoff event for fd %d ignored (the module holds the socket)", a.sock);
            return;
        }
        up_.path_failed(c, std::string("o2g handed a frame over but will not give it: ") + std::strerror(-err));
        return;
    }
    auto d = wire::decode_header(h.header);
    const auto* fh = std::get_if<wire::frame_header>(&d);
    if (fh == nullptr) {
        up_.path_failed(c, "a bad frame header: " + std::get<wire::decode_error>(d).reason);
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

// The op leaves the module's books (and its bounce buffer, if any, goes).
void kernel_backend::finished(op& o)
{
    if (auto it = by_context_.find(o.context); it != by_context_.end() && it->second == &o)
        by_context_.erase(it);
    posted_ops_.erase(&o);
    bounce_.erase(&o);
}

void kernel_backend::completed(op& o, const o2g_completion& e)
{
    if (e.status == 0 && (e.flags & O2G_CQE_RENDEZVOUS)) {
        start_rendezvous(o, e);
        return;
    }
    if (e.status == 0 && o.iov_count > 1) {
        // The module wrote the bounce buffer: the message goes where MPI wants it.
        const auto& bounce = bounce_.at(&o);
        scatter(o.iov.data(), o.iov_count, bounce.data(), std::min<std::size_t>(e.received, bounce.size()));
    }
    finished(o);
    if (e.status != 0) {
        // EFAULT: the buffer was unmapped before the message came (or, for
        // a receive the posting ring refused, never mapped); ECONNRESET: its
        // connection broke mid-message; ECANCELED: cancelled in the ring.
        if (e.flags & O2G_CQE_REFUSED)
            log_error("o2g refused a receive of %zu bytes posted through its ring: %s%s", o.length,
                std::strerror(static_cast<int>(e.status)), refusal_hint(static_cast<int>(e.status)).c_str());
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

// The peer a rendezvous request came from: the path of the socket the
// module names, which must be that peer's (a descriptor number reused by
// another path since would otherwise send our answer to a stranger), or,
// for a socket forgotten meanwhile, the peer at the message's source.
peer* kernel_backend::sender_of(const o2g_completion& e) const
{
    if (auto it = by_sock_.find(e.sock); it != by_sock_.end() && it->second.c->p != nullptr) {
        peer* p = it->second.c->p;
        if (e.source == O2G_ANY_SOURCE || p->fi_addr == e.source)
            return p;
    }
    return e.source == O2G_ANY_SOURCE ? nullptr : peers_.at_index(e.source);
}

// A tagged rendezvous request matched `o` in the module: the data comes as
// the user backend's rendezvous receive, straight into o's buffers.
void kernel_backend::start_rendezvous(op& o, const o2g_completion& e)
{
    finished(o);
    peer* p = sender_of(e);
    o.msg_length = e.length;
    o.msg_tag = e.tag;
    o.msg_data = e.data;
    o.has_data = (e.flags & O2G_CQE_REMOTE_DATA) != 0;
    if (p == nullptr || p->failed) {
        log_error("a message of %llu bytes matched by o2g came from a peer %s",
            static_cast<unsigned long long>(e.length), p == nullptr ? "this endpoint no longer knows" : "that failed");
        done_.error(o, FI_EIO);
        return;
    }
    o.p = p;
    user_.start_rendezvous_recv(o, e.sender_op, *p);
}

// A rendezvous request dropped by FI_DISCARD: the sender is told 0 bytes
// are wanted, so its send completes.
void kernel_backend::decline_rendezvous(const o2g_completion& e)
{
    if (peer* p = sender_of(e); p != nullptr && !p->failed)
        up_.clear_to_send(*p, e.sender_op, 0, 0);
}

bool kernel_backend::poll()
{
    bool moved = false;
    // Receives written to the posting ring while the module held
    // unexpected messages: taken now, one ioctl for all of them.
    dev_.flush_posts();
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

std::pair<std::uintptr_t, std::size_t> kernel_backend::module_buffer(op& o)
{
    if (o.iov_count == 0)
        return {0, 0};
    if (o.iov_count == 1)
        return {reinterpret_cast<std::uintptr_t>(o.iov[0].iov_base), o.iov[0].iov_len};
    auto& bounce = bounce_[&o];
    bounce.resize(o.length);
    return {reinterpret_cast<std::uintptr_t>(bounce.data()), bounce.size()};
}

ssize_t kernel_backend::post(const recv_request& r)
{
    if (!r.tagged || (r.flags & FI_MULTI_RECV))
        return user_.post(r);
    if (r.count > provider_iov_limit)
        return -FI_EINVAL;
    if (r.src != FI_ADDR_UNSPEC && (b_.av == nullptr || r.src >= b_.av->entries.size()))
        return -FI_EINVAL;
    if (r.flags & FI_PEEK)
        return peek(r);
    if (r.flags & FI_CLAIM)
        return claim(r);
    op* o = new_recv_op(ops_, r);
    const auto buffer = module_buffer(*o);

    if (ring_has_room()) {
        auto p = describe_recv<o2g_post>(o, r, buffer);
        p.op = O2G_POST_RECV;
        by_context_[r.context] = o;
        posted_ops_.insert(o);
        if (dev_.ring_post(p))
            return 0; // its completion (or refusal) comes through the completion ring
        by_context_.erase(r.context);
        posted_ops_.erase(o);
    }

    auto k = describe_recv<o2g_recv>(o, r, buffer);
    const int e = dev_.post(k);
    if (e != 0) {
        bounce_.erase(o);
        ops_.release(o);
        if (e == -EAGAIN)
            return -FI_EAGAIN; // the ring or max_posted is full: progress, then again
        log_error("o2g refused a receive of %zu bytes: %s%s", o->length, std::strerror(-e), refusal_hint(-e).c_str());
        return e == -EFAULT ? -FI_EFAULT : e == -ENOMEM ? -FI_ENOMEM : -FI_EINVAL;
    }
    by_context_[r.context] = o;
    posted_ops_.insert(o);
    if (k.result == O2G_RESULT_MATCH)
        completed(*o, k.done); // it was there already, and is copied now
    return 0;
}

// MPI_Iprobe and MPI_Improbe: the answer arrives as a completion, as from
// the user backend (success with the message's length, tag and data, or
// FI_ENOMSG).
ssize_t kernel_backend::peek(const recv_request& r)
{
    o2g_peek k {};
    k.source = r.src == FI_ADDR_UNSPEC ? O2G_ANY_SOURCE : r.src;
    k.tag = r.tag;
    k.ignore = r.ignore;
    if (r.flags & FI_CLAIM) {
        k.flags = O2G_PEEK_CLAIM;
        k.claim = claim_of(r.context);
    }
    if (const int e = dev_.peek(k); e != 0) {
        log_error("o2g refused a peek: %s", std::strerror(-e));
        return -FI_EIO;
    }
    const bool found = k.result == O2G_RESULT_MESSAGE;
    done_.peek_result(r.context, true, found, found ? k.msg.length : 0, k.msg.tag, k.msg.data,
        (k.msg.flags & O2G_CQE_REMOTE_DATA) != 0);
    if (found && (r.flags & FI_CLAIM) && (r.flags & FI_DISCARD)) {
        // Claimed and dropped at once: a zero-length claim receive takes it.
        o2g_recv d {};
        d.flags = O2G_RECV_CLAIM;
        d.claim = k.claim;
        if (dev_.post(d) == 0 && (d.done.flags & O2G_CQE_RENDEZVOUS))
            decline_rendezvous(d.done);
    }
    return 0;
}

// MPI_Mrecv: the receive takes the message a peek reserved for its context,
// at once (the module copies it in this call, or it came by rendezvous).
ssize_t kernel_backend::claim(const recv_request& r)
{
    op* o = new_recv_op(ops_, r);
    const bool discard = (r.flags & FI_DISCARD) != 0;
    o2g_recv k {};
    k.cookie = cookie_of(o);
    k.flags = O2G_RECV_CLAIM;
    k.claim = claim_of(r.context);
    if (!discard) {
        const auto buffer = module_buffer(*o);
        k.addr = buffer.first;
        k.len = buffer.second;
    }
    if (const int e = dev_.post(k); e != 0) {
        bounce_.erase(o);
        ops_.release(o);
        if (e != -ENOENT)
            log_error("o2g refused a claimed receive of %zu bytes: %s", o->length, std::strerror(-e));
        return e == -EFAULT ? -FI_EFAULT : -FI_EINVAL; // ENOENT: nothing was claimed for this context
    }
    if (discard) {
        if (k.done.flags & O2G_CQE_RENDEZVOUS)
            decline_rendezvous(k.done);
        o->msg_tag = k.done.tag;
        o->msg_data = k.done.data;
        o->completion = true;
        done_.recv_done(*o);
        return 0;
    }
    posted_ops_.insert(o);
    completed(*o, k.done);
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
    finished(*o);
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
            finished(*o);
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
