// SPDX-License-Identifier: BSD-3-Clause
// The engine's wiring, its progress round, path events, writing, failures
// and close (engine.hpp). The send protocol is in send_protocol.cpp.
#include "transport/engine/engine.hpp"

#include "transport/common.hpp"
#include "transport/objects.hpp"
#include "transport/recv/kernel_backend.hpp"
#include "transport/recv/user_backend.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <utility>
#include <vector>

namespace hashi::fi {

namespace {
// A path's write queue holds at most this much committed but unwritten
// data beyond the frame being written: control frames overtake the rest.
// Large enough for one sendmsg to gather across chunk boundaries: with
// 256 KiB (a quarter of a chunk) the bandwidth of 256 KiB-4 MiB messages
// fell to 0.56-0.72 of the single-queue provider's (bench/p2p, loopback).
constexpr std::size_t commit_window_bytes = 4u << 20;
constexpr std::size_t commit_window_frames = 48;
// A striped peer's paths each hold less: what one path has committed ahead
// of another arrives ahead of its turn and waits in the receiver's reorder
// stage (8 MiB a peer), so the windows of all lanes together stay below it.
constexpr std::size_t stripe_window_bytes = 1u << 20;
// Chunks of striped transfers: small enough that a message just above
// FI_HASHI_STRIPE_MIN is cut in two, large enough that a 56-byte header and
// a frame per chunk cost nothing.
constexpr std::size_t stripe_chunk_bytes = 128u << 10;
// A striped peer's path takes no new frames while its socket holds this
// much that the relay has not taken: the kernel's send buffer would
// otherwise let the first lane take nearly every chunk (the relay's link
// to the rank is a fast LAN; the WAN behind it is what is slow), so each
// lane's queue is kept short and the next chunk goes to the lane that
// drained. Seen without it: 39 MB on one trunk, 3.7 MB on the other.
constexpr std::size_t stripe_backlog_bytes = 512u << 10;
// While every lane is backlogged, flush() looks again this often.
constexpr std::uint64_t stripe_recheck_ns = 2'000'000;
} // namespace

engine::engine(domain_obj& domain, const bindings& b, const std::size_t& min_multi_recv, const engine_settings& s,
    const endpoint_identity& self, job_key key, int listen_fd, std::optional<liveness_settings> live, int udp_fd,
    wan_pacing pacing)
    : domain_(domain), b_(b), settings_(s), self_(self), key_(std::move(key)),
      router_(self.addr, s.relays), peers_(s.chunk_size, router_), done_(b_, ops_),
      backend_(make_backend(domain, min_multi_recv)),
      paths_(loop_, peers_, router_, key_, self_, s.protection, *this, *this), pacing_(pacing), coalescing_(s.send_coalescing),
      stats_dir_(std::getenv("FI_HASHI_STATS_DIR") != nullptr ? std::getenv("FI_HASHI_STATS_DIR") : "")
{
    peers_.add_listener(this);
    peers_.add_listener(backend_.get());
    // Only a backend that reads the sockets itself can be asked to read one
    // first (the o2g module reads them in the kernel).
    if (settings_.read_first && dynamic_cast<user_backend*>(backend_.get()) != nullptr)
        read_first_ = std::make_unique<read_first<path>>();
    if (auto* k = dynamic_cast<kernel_backend*>(backend_.get()); k != nullptr && k->ring_first())
        ring_first_ = std::make_unique<read_first<receive_backend>>();
    paths_.listen(listen_fd);
    paths_.setup_self(peers_.add_self(self_.addr), settings_.recv_backend != recv_backend_kind::user);
    if (live && live->enabled())
        liveness_ = std::make_unique<liveness_monitor>(*live, key_.material(), self_.addr.nonce, udp_fd);
}

engine::~engine() = default;

std::unique_ptr<receive_backend> engine::make_backend(domain_obj& domain, const std::size_t& min_multi_recv)
{
    if (settings_.recv_backend != recv_backend_kind::user) {
        try {
            auto k = std::make_unique<kernel_backend>(domain, b_, peers_, ops_, done_, *this, min_multi_recv, loop_);
            if (const auto problem = k->pin_limit_problem(); !problem.empty()) {
                // auto must not trade a working job for a faster one that
                // may fail; kernel was asked for by name.
                if (settings_.recv_backend != recv_backend_kind::kernel)
                    throw std::runtime_error(problem);
                log_warn("FI_HASHI_RECV=kernel: %s", problem.c_str());
            }
            return k;
        } catch (const std::exception& e) {
            if (settings_.recv_backend == recv_backend_kind::kernel)
                throw std::runtime_error(std::string("FI_HASHI_RECV=kernel: ") + e.what());
            log_warn("receiving in user space (FI_HASHI_RECV=auto): %s", e.what());
        }
    }
    return std::make_unique<user_backend>(domain, b_, peers_, ops_, done_, *this, min_multi_recv);
}

void engine::close_path(path& c)
{
    if (read_first_)
        read_first_->forget(&c);
    backend_->detach(c);
    if (c.p != nullptr)
        pacing_.forget({c.p, c.fd()});
    paths_.close(c);
}

bool engine::progress()
{
    bool moved = false;
    if (coalescing_.on_other_call()) {
        write_held();
        moved = true;
    }
    bool skip_epoll = false;
    if (read_first_) {
        if (path* hot = read_first_->hot()) {
            const bool got = hot->st == path::state::open && hot->attached && backend_->on_readable(*hot);
            moved = moved || got;
            skip_epoll = read_first_->skip_epoll(got, tx_queued_ > 0);
        }
    } else if (ring_first_ && ring_first_->hot() != nullptr) {
        const bool got = backend_->poll();
        moved = moved || got;
        skip_epoll = ring_first_->skip_epoll(got, tx_queued_ > 0);
    }
    if (skip_epoll ? loop_.run_timers() : loop_.poll())
        moved = true;
    if (backend_->poll()) {
        moved = true;
        if (ring_first_)
            ring_first_->input_on(backend_.get());
    }
    // Protected streams may hold decoded input that no epoll event announces.
    paths_.for_each_buffered([&](path& c) {
        if (backend_->on_readable(c))
            moved = true;
    });
    if (read_first_ && read_first_->hot() != nullptr && read_first_->hot()->st == path::state::closed)
        read_first_->forget(read_first_->hot()); // closed elsewhere; reap() frees it now
    paths_.reap();
    liveness_progress(); // waiting.cpp
    stats_progress(); // stats.cpp
    return moved;
}

ssize_t engine::post_recv(const recv_request& r)
{
    release_held();
    if (r.flags & FI_PEEK)
        progress();
    return backend_->post(r);
}

void engine::on_av_insert(fi_addr_t index, const endpoint_address& a)
{
    // It connected to us before we knew it (dynamic processes): what it
    // sent so far is renumbered so directed receives can match it.
    if (peer* p = peers_.on_av_insert(index, a))
        backend_->renumber(*p);
}

// ---- paths -----------------------------------------------------------------

void engine::on_path_events(path& c, std::uint32_t events)
{
    if (c.st == path::state::closed)
        return;
    if (c.st != path::state::open || c.securing) {
        paths_.handshake_events(c, events);
        return;
    }
    if ((events & (EPOLLIN | EPOLLERR | EPOLLHUP)) != 0) {
        if (!c.attached)
            paths_.handshake_events(c, EPOLLIN); // the connector's hello_ack
        else if (backend_->on_readable(c) && read_first_ && c.st == path::state::open)
            read_first_->input_on(&c);
    }
    if (c.st == path::state::closed || (events & EPOLLOUT) == 0)
        return;
    if (!c.hs_out.empty()) {
        std::string err;
        if (!c.flush_handshake(err)) {
            if (!err.empty())
                path_failed(c, err);
            return;
        }
    }
    if (c.p != nullptr && std::find(c.p->paths.begin(), c.p->paths.end(), &c) != c.p->paths.end())
        flush(*c.p); // arms EPOLLOUT again itself while bytes are left
    else
        c.want_write(false);
}

void engine::path_open(peer& p, path& /*c*/)
{
    flush(p);
}

void engine::path_readable(path& c)
{
    backend_->attach(c);
    backend_->on_readable(c);
}

void engine::path_failed(path& c, const std::string& why)
{
    peer* p = c.p;
    // A stripe lane goes through another trunk than the one the peer's
    // description names: say which, or the message blames the wrong relay.
    std::string reason = why;
    if (p != nullptr && c.lane != 0) {
        const route r = router_.route_for(*p, c.lane);
        if (r.how == route::kind::relay)
            reason = "its stripe lane " + std::to_string(c.lane) + ", " + router_.via(p->addr, r.trunk) + ": " + why;
    }
    close_path(c);
    if (p != nullptr)
        peers_.fail(*p, reason, closing_);
}

void engine::path_ended(path& c)
{
    peer* p = c.p;
    close_path(c);
    // Anything still queued for it cannot be delivered.
    if (p != nullptr && !closing_ && (!p->sched.empty() || !c.wq.empty()))
        peers_.fail(*p, "the peer closed its endpoint with messages for it still queued", closing_);
}

// ---- writing ---------------------------------------------------------------

void engine::hold_for(peer& p, std::uint64_t now)
{
    if (!p.held) {
        p.held = true;
        held_peers_.push_back(&p);
    }
    if (coalescing_.held() == 1 && domain_.flusher)
        domain_.flusher->note_hold(now);
}

std::uint64_t engine::flush_held(std::uint64_t now, std::uint64_t older_than_ns)
{
    if (coalescing_.held() == 0)
        return 0;
    const std::uint64_t first = coalescing_.first_held_ns();
    if (now - first < older_than_ns)
        return first;
    coalescing_.flushed();
    write_held_peers();
    return 0;
}

void engine::write_held()
{
    coalescing_.released(monotonic_ns());
    write_held_peers();
}

void engine::write_held_peers()
{
    // flush() may fail a peer, never hold more: a private list anyway.
    std::vector<peer*> held;
    held.swap(held_peers_);
    for (peer* p : held) {
        p->held = false;
        if (!p->failed)
            flush(*p);
    }
    held.clear();
    if (held_peers_.empty())
        held_peers_.swap(held); // keep the capacity
}

void engine::frame_written(peer& p, tx_frame& f)
{
    p.stats.tx_bytes += f.h.length;
    if (f.ends_entry)
        --tx_queued_;
    if (op* o = f.chunk_of; o != nullptr && --o->chunks_unwritten == 0 && o->done_deferred) {
        o->done_deferred = false; // the last of its chunks on the other lanes
        done_.send_done(*o);
    }
    if (f.done != nullptr) {
        if (f.done->chunks_unwritten > 0)
            f.done->done_deferred = true; // earlier chunks wait on other lanes
        else
            done_.send_done(*f.done);
    }
}

bool engine::flush(peer& p)
{
    path* lane0 = router_.path_for(p);
    if (lane0 == nullptr)
        return false;
    stripe_policy stripes;
    if (settings_.stripe_min != 0) {
        const std::size_t lanes = router_.lanes(p);
        // Stripe lanes are made for the first transfer worth striping, from
        // a timer: flush() may run inside a walk over the paths (a CTS read
        // from a protected stream's buffered input), which a new path must
        // not disturb. Peers live as long as the endpoint.
        if (lanes > 1 && !p.lanes_dialed && p.sched.largest_transfer() >= settings_.stripe_min) {
            p.lanes_dialed = true;
            loop_.at(monotonic_ns(), [this, pp = &p, lanes] {
                if (!pp->failed && !closing_)
                    paths_.ensure_lanes(*pp, lanes);
            });
        }
        if (lanes > 1 && p.paths.size() > 1) {
            stripes.min_total = settings_.stripe_min;
            stripes.chunk = stripe_chunk_bytes;
            stripes.lanes = p.paths.size();
        }
    }
    if (stripes.min_total == 0) {
        // One lane carries everything (a lane the peer made carries its
        // chunks to us, and our goodbye at close: written, nothing added).
        bool moved = flush_path(p, *lane0, stripes, SIZE_MAX);
        stripes.only_striped = true;
        for (std::size_t i = 0; i < p.paths.size() && !p.failed; ++i)
            if (p.paths[i] != lane0 && flush_path(p, *p.paths[i], stripes, 0))
                moved = true;
        return moved;
    }
    // Striping: the lanes take turns, one frame each per round (lane 0
    // anything, the others chunks of striped transfers only), until none
    // can take more. In each round the lanes offer in the order of what
    // this process has committed to their trunks (trunk_bytes_), least
    // first, so that the bytes of all its striped peers spread evenly over
    // the trunks however few transfers each call has to place: taking
    // turns from lane 0 put them on the first lanes, and each peer's lanes
    // start at its own pair's trunk, so an alltoall's trunks were loaded
    // 1 to 43 MB (bench/relay/run-trunks). A lane whose socket is
    // backlogged sits out (flush_path), so a trunk that drains slower
    // carries less.
    bool moved = false;
    // (trunk, path), the trunks looked up once per call (no path is added
    // during it: lanes are dialed from a timer); local, since a path's
    // failure inside the walk may lead to another peer's flush().
    std::vector<std::pair<std::size_t, path*>> order;
    order.reserve(p.paths.size());
    for (path* c : p.paths)
        order.emplace_back(router_.route_for(p, c->lane).trunk % trunk_bytes_.size(), c);
    for (int round = 0; round < 4096 && !p.failed; ++round) {
        bool any = false;
        std::stable_sort(order.begin(), order.end(),
            [&](const auto& x, const auto& y) { return trunk_bytes_[x.first] < trunk_bytes_[y.first]; });
        for (const auto& [trunk, c] : order) {
            if (p.failed)
                break;
            // A path closed during this round is no longer the peer's.
            if (std::find(p.paths.begin(), p.paths.end(), c) == p.paths.end())
                continue;
            stripe_policy lane = stripes;
            lane.only_striped = c != lane0;
            const std::size_t before = p.tx_seq;
            std::size_t committed = 0;
            if (flush_path(p, *c, lane, 1, &committed))
                moved = true;
            trunk_bytes_[trunk] += committed;
            if (p.tx_seq != before)
                any = true; // committed a frame: another round
        }
        if (!any)
            break;
    }
    return moved;
}

bool engine::flush_path(peer& p, path& path_ref, const stripe_policy& stripes, std::size_t max_frames,
    std::size_t* committed_bytes)
{
    path* c = &path_ref;
    if (c->st != path::state::open || c->securing)
        return false;
    const std::size_t window = stripes.min_total != 0 ? stripe_window_bytes : commit_window_bytes;
    // Handshake bytes (the proof, the hello_ack) go before any frame.
    if (!c->hs_out.empty()) {
        std::string err;
        if (!c->flush_handshake(err)) {
            if (!err.empty())
                path_failed(*c, err);
            return false;
        }
    }
    // The pacer hook: a socket that crosses the WAN passes the process's
    // WAN token bucket and paces at the same rate (wan_pacing.hpp); one to
    // a relay does not, its trunk is paced (router::sends_into_wan).
    pacer* paced = nullptr;
    if (router_.sends_into_wan(p.addr)) {
        const std::uint64_t now = monotonic_ns();
        paced = pacing_.wan_pacer(now);
        if (paced != nullptr && expire_wan_senders(now))
            spread_wan_share();
        pacing_.apply(c->fd(), c->wan_tuned, c->pacing_generation);
    }
    pacer& pace = paced != nullptr ? *paced : no_pacing_;
    bool moved = false;
    bool backlogged = false;
    for (;;) {
        const std::size_t committed = c->committed_bytes();
        if (committed < window && max_frames > 0) {
            if (stripes.min_total != 0 && c->unsent_bytes() >= stripe_backlog_bytes) {
                backlogged = true; // the other lanes take the next chunks
            } else {
                const std::size_t had = c->wq.size();
                const std::size_t limit = std::min(commit_window_frames, had + std::min(max_frames, commit_window_frames));
                const std::size_t bytes = p.sched.commit(c->wq, limit, window - committed, p.tx_seq, stripes);
                c->commit(bytes);
                if (committed_bytes != nullptr)
                    *committed_bytes += bytes;
                max_frames -= std::min(max_frames, c->wq.size() - had);
            }
        }
        // Done only when the protected stream has put its sealed bytes on
        // the socket too: frames count as written once the stream took
        // them, and a record it could not finish waits for EPOLLOUT here
        // (write() flushes it first). Disarming EPOLLOUT with such bytes
        // still inside left them there for good and the peer waiting: jobs
        // across clusters hung so (tests/wan/federation.sh, isort_mpich).
        if (c->wq.empty() && !(c->stream && c->stream->output_pending())) {
            c->want_write(false);
            if (backlogged && !p.sched.empty() && !p.stripe_wait) {
                // No event says when the relay has taken the queue: look again.
                p.stripe_wait = true;
                loop_.at(monotonic_ns() + stripe_recheck_ns, [this, pp = &p] {
                    pp->stripe_wait = false;
                    if (!pp->failed)
                        flush(*pp);
                });
            }
            return moved;
        }
        std::string err;
        const std::uint64_t now = monotonic_ns();
        const std::size_t unwritten = c->committed_bytes();
        const auto r = c->write(pace, now, err, [&](tx_frame& f) {
            moved = true;
            frame_written(p, f);
        });
        // Counted by the bytes the kernel took, not by frames finished: a
        // rendezvous transfer's frame takes seconds at a WAN share.
        if (paced != nullptr && r != path::write_result::failed && c->committed_bytes() < unwritten &&
            pacing_.sent({&p, c->fd()}, unwritten - c->committed_bytes(), now))
            spread_wan_share();
        switch (r) {
        case path::write_result::done:
            continue; // commit what is left
        case path::write_result::blocked:
            return moved;
        case path::write_result::paced:
            if (!p.pace_wait) {
                p.pace_wait = true;
                loop_.at(pace.ready_at(now), [this, pp = &p] {
                    pp->pace_wait = false;
                    if (!pp->failed)
                        flush(*pp);
                });
            }
            return moved;
        case path::write_result::failed:
            path_failed(*c, err);
            return moved;
        }
    }
}

path* engine::sending_path(const sending_sockets::key& k)
{
    // Peers live as long as the endpoint; the path may have closed since.
    auto& owner = *static_cast<peer*>(const_cast<void*>(k.owner));
    const auto it = std::find_if(owner.paths.begin(), owner.paths.end(),
        [&](const path* c) { return c->fd() == k.fd && c->st == path::state::open; });
    return it == owner.paths.end() ? nullptr : *it;
}

bool engine::expire_wan_senders(std::uint64_t now)
{
    return pacing_.expire(now, [this](const sending_sockets::key& k) -> std::size_t {
        const path* c = sending_path(k);
        if (c == nullptr)
            return 0;
        std::size_t left = c->kernel_unsent_bytes();
        // Bytes still waiting in user space (for the token bucket, or for
        // the socket) keep it sending too: looked at again after 64 KiB at
        // its part. Not counted as bytes: sent() counts them when written.
        if (c->committed_bytes() != 0 || !static_cast<const peer*>(k.owner)->sched.empty())
            left = std::max<std::size_t>(left, 64u << 10);
        return left;
    });
}

void engine::spread_wan_share()
{
    // Every sending WAN socket gets its part of the share now, not at its
    // next write: an alltoall's sockets hold up to FI_HASHI_WAN_NOTSENT_LOWAT
    // unsent each. A pair no longer naming an open path of its peer (closed
    // since) is dropped.
    std::vector<sending_sockets::key> gone;
    HASHI_DEBUG("WAN share split over %zu sending sockets", pacing_.sending().count());
    pacing_.sending().for_each([&](const sending_sockets::key& k) {
        if (path* c = sending_path(k))
            pacing_.apply(c->fd(), c->wan_tuned, c->pacing_generation);
        else
            gone.push_back(k);
    });
    for (const auto& k : gone)
        pacing_.forget(k);
    arm_wan_spread();
}

void engine::arm_wan_spread()
{
    // When a socket stops sending, the others get its part: look again then
    // (a socket alone has the whole share already).
    const std::uint64_t next = pacing_.sending().next_expiry();
    if (pacing_.sending().count() < 2 || next == 0 || (wan_spread_at_ != 0 && wan_spread_at_ <= next))
        return;
    wan_spread_at_ = next;
    loop_.at(next, [this, next] {
        if (wan_spread_at_ != next)
            return; // an earlier look took over
        wan_spread_at_ = 0;
        if (closing_)
            return;
        if (expire_wan_senders(monotonic_ns()))
            spread_wan_share();
        else
            arm_wan_spread();
    });
}

void engine::bye_on_stripe_lanes(peer& p)
{
    // Each goodbye is numbered in the peer's sequence like any frame, so
    // the receiver's reorder stage takes it in turn; each tells the reader
    // of its lane that the end of that connection is no failure.
    for (path* c : p.paths) {
        if (c == router_.path_for(p))
            continue;
        tx_frame f;
        f.h.type = wire::frame_type::bye;
        f.h.seq = p.tx_seq++;
        f.hdr = wire::encode_header(f.h);
        f.ends_entry = false; // not an entry of the send queue
        c->commit(f.total());
        c->wq.push_back(std::move(f));
    }
}

// ---- failures --------------------------------------------------------------

void engine::peer_failed(peer& p)
{
    // Every operation that needs this peer ends with an error completion:
    // MPICH then reports the failure instead of waiting forever.
    auto drop_path = [&](path* c) {
        for (auto& f : c->wq) {
            if (f.ends_entry)
                --tx_queued_;
            if (op* o = f.chunk_of; o != nullptr && o->done_deferred) {
                o->done_deferred = false; // its last chunk was written, this one never will be
                done_.error(*o, FI_EIO);
            }
            if (f.done != nullptr)
                done_.error(*f.done, FI_EIO);
        }
        c->wq.clear();
        close_path(*c);
    };
    while (!p.paths.empty())
        drop_path(p.paths.front());
    if (p.dialing != nullptr)
        close_path(*p.dialing);
    for (path* c : p.lane_dialing)
        if (c != nullptr)
            close_path(*c);
    p.redial_pending = false;
    tx_queued_ -= p.sched.drop([&](op* o) { done_.error(*o, FI_EIO); });
    for (op* o : ops_.waiting_on(&p)) {
        if (o->wait == op::waits::rma)
            done_.rma_done(*o, -FI_EIO);
        else
            done_.error(*o, FI_EIO);
    }
}

// ---- close -----------------------------------------------------------------

bool engine::any_queued() const
{
    bool queued = false;
    peers_.for_each([&](const peer& p) {
        if (!p.failed && (!p.sched.empty() || p.dialing != nullptr || p.redial_pending))
            queued = true;
        for (const path* c : p.paths)
            if (!p.failed && !c->wq.empty())
                queued = true;
    });
    if (queued)
        return true;
    // Rendezvous sends and RMA still waiting for their peer.
    ops_.for_each_waiting([&](const op& o) {
        if (o.p != nullptr && !o.p->failed)
            queued = true;
    });
    return queued;
}

void engine::drain_and_close()
{
    closing_ = true;
    paths_.set_closing();
    // MPICH does not barrier before closing, so the last eager messages
    // may still sit in our queues: deliver them, then tell every peer we
    // are done and wait (bounded) until each has told us the same, so
    // none of their last messages to us is cut off either.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(settings_.close_timeout_s);
    while (any_queued() && std::chrono::steady_clock::now() < deadline)
        if (!progress())
            domain_.progress();
    peers_.for_each([&](const peer& cp) {
        auto& p = const_cast<peer&>(cp);
        if (p.connected() && !p.failed && !p.is_self) {
            queue_control(p, wire::frame_type::bye, 0, 0, 0);
            bye_on_stripe_lanes(p);
            flush(p);
        }
    });
    // Then wait until every peer has our bytes (nothing left in the
    // kernel's send queue) and has gone quiet or said goodbye too:
    // closing a socket with unread data sends a reset, which can destroy
    // what the peer has not read yet.
    auto last_rx = std::chrono::steady_clock::now();
    for (;;) {
        if (progress())
            last_rx = std::chrono::steady_clock::now();
        bool all_done = true, all_acked = true;
        paths_.for_each_path([&](const path& c) {
            if (c.st != path::state::open || c.rx_only || c.p == nullptr || c.p->failed || c.p->is_self)
                return;
            if (!c.bye_received && !c.eof)
                all_done = false;
            if (c.unsent_bytes() > 0 || !c.wq.empty() || !c.p->sched.empty())
                all_acked = false;
        });
        const auto now = std::chrono::steady_clock::now();
        if (all_done && all_acked)
            break;
        if (all_acked && now - last_rx > std::chrono::milliseconds(200))
            break;
        if (now >= deadline) {
            log_warn("closing the endpoint after %llu s although peers have not received everything; their "
                     "last messages from this process may be lost",
                static_cast<unsigned long long>(settings_.close_timeout_s));
            break;
        }
    }
    write_stats();
}

} // namespace hashi::fi
