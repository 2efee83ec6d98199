// SPDX-License-Identifier: BSD-3-Clause
// Endpoint lifecycle: creation, binding to AV/CQ/counters, enabling (the
// listening socket and the business card), options, and a close that
// delivers everything queued before the sockets go away.
#include "transport/endpoint.hpp"

#include "transport/engine/local_address.hpp"
#include "transport/ep_ops.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>

namespace hashi::fi {

namespace {

int ep_close(fid* f)
{
    auto* ep = owner_of<endpoint>(reinterpret_cast<fid_ep*>(f));
    return guarded([&] { return ep->close(); });
}

int ep_bind(fid* f, fid* bfid, std::uint64_t flags)
{
    auto* ep = owner_of<endpoint>(reinterpret_cast<fid_ep*>(f));
    return guarded([&] { return ep->bind(bfid, flags); });
}

int ep_control(fid* f, int command, void* /*arg*/)
{
    auto* ep = owner_of<endpoint>(reinterpret_cast<fid_ep*>(f));
    if (command == FI_ENABLE)
        return guarded([&] { return ep->enable(); });
    return -FI_ENOSYS;
}

fi_ops ep_fid_ops = {
    .size = sizeof(fi_ops),
    .close = ep_close,
    .bind = ep_bind,
    .control = ep_control,
    .ops_open = no_ops_open,
    .tostr = no_tostr,
    .ops_set = no_ops_set,
};

std::uint64_t random64()
{
    std::uint64_t v = 0;
    if (getrandom(&v, sizeof v, 0) != static_cast<ssize_t>(sizeof v))
        v = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^ getpid();
    return v;
}

} // namespace

endpoint::endpoint(domain_obj* dom, const fi_info* info, void* context) : domain(dom)
{
    box.owner = this;
    box.fid.fid.fclass = FI_CLASS_EP;
    box.fid.fid.context = context;
    box.fid.fid.ops = &ep_fid_ops;
    box.fid.ops = &ep_base_ops;
    box.fid.cm = &ep_cm_ops;
    box.fid.msg = &ep_msg_ops;
    box.fid.rma = &ep_rma_ops;
    box.fid.tagged = &ep_tagged_ops;
    box.fid.atomic = &ep_atomic_ops;
    box.fid.collective = nullptr;
    if (info != nullptr && info->tx_attr != nullptr)
        tx_op_flags_ = info->tx_attr->op_flags;
    else
        tx_op_flags_ = FI_COMPLETION;
    if (info != nullptr && info->rx_attr != nullptr)
        rx_op_flags_ = info->rx_attr->op_flags;
    else
        rx_op_flags_ = FI_COMPLETION;
    char host[wire::host_name_size] = {};
    gethostname(host, sizeof host - 1);
    host_ = host;
    // mpiexec's exec launcher names emulated nodes; messages use that name.
    if (const char* n = std::getenv("HASHI_NODE_NAME"); n != nullptr && *n != '\0')
        host_ = std::string(n).substr(0, wire::host_name_size - 1);
    dom->endpoints.push_back(this);
    dom->refs++;
}

endpoint::~endpoint()
{
    for (auto& c : conns_)
        if (c->fd >= 0)
            ::close(c->fd);
    if (listen_fd_ >= 0)
        ::close(listen_fd_);
    if (epoll_fd_ >= 0)
        ::close(epoll_fd_);
    // Operations still posted or in flight when the endpoint goes (MPICH
    // leaves its multi-receive buffers posted) are freed with it.
    std::set<op*> live;
    for (auto& [ctx, o] : posted_)
        live.insert(o);
    for (auto* m : {&rdv_sends_, &rdv_recvs_, &rma_ops_})
        for (auto& [id, o] : *m)
            live.insert(o);
    for (auto& [key, p] : peers_)
        for (auto& t : p->txq)
            if (t.done != nullptr)
                live.insert(t.done);
    for (op* o : live)
        delete o;
    for (op* o : free_ops_)
        delete o;
}

int endpoint_open(fid_domain* domain, fi_info* info, fid_ep** out, void* context)
{
    return guarded([&]() -> int {
        auto* dom = owner_of<domain_obj>(domain);
        if (info != nullptr && info->ep_attr != nullptr && info->ep_attr->type != FI_EP_RDM &&
            info->ep_attr->type != FI_EP_UNSPEC)
            return -FI_EINVAL;
        auto* ep = new endpoint(dom, info, context);
        *out = &ep->box.fid;
        return 0;
    });
}

int endpoint::bind(fid* bfid, std::uint64_t flags)
{
    if (enabled_)
        return -FI_EOPBADSTATE;
    switch (bfid->fclass) {
    case FI_CLASS_AV: {
        if (av_ != nullptr)
            return -FI_EINVAL;
        av_ = owner_of<av_obj>(reinterpret_cast<fid_av*>(bfid));
        av_->refs++;
        av_->endpoints.push_back(this);
        return 0;
    }
    case FI_CLASS_CQ: {
        auto* cq = owner_of<cq_obj>(reinterpret_cast<fid_cq*>(bfid));
        if ((flags & ~(FI_SEND | FI_RECV | FI_SELECTIVE_COMPLETION | FI_TRANSMIT | FI_RECV)) != 0)
            return -FI_EBADFLAGS;
        if (flags & (FI_SEND | FI_TRANSMIT)) {
            tx_cq_ = cq;
            tx_selective_ = flags & FI_SELECTIVE_COMPLETION;
            cq->refs++;
        }
        if (flags & FI_RECV) {
            rx_cq_ = cq;
            rx_selective_ = flags & FI_SELECTIVE_COMPLETION;
            cq->refs++;
        }
        return 0;
    }
    case FI_CLASS_CNTR: {
        auto* c = owner_of<cntr_obj>(reinterpret_cast<fid_cntr*>(bfid));
        if ((flags & ~(FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)) != 0)
            return -FI_EBADFLAGS;
        // Remote-side counters would need FI_RMA_EVENT.
        if (flags & (FI_REMOTE_READ | FI_REMOTE_WRITE))
            return -FI_ENOSYS;
        auto set = [&](cntr_obj*& slot) {
            slot = c;
            c->refs++;
        };
        if (flags & FI_SEND)
            set(send_cntr_);
        if (flags & FI_RECV)
            set(recv_cntr_);
        if (flags & FI_READ)
            set(read_cntr_);
        if (flags & FI_WRITE)
            set(write_cntr_);
        return 0;
    }
    default:
        return -FI_EINVAL;
    }
}

int endpoint::enable()
{
    if (enabled_)
        return 0;
    if (av_ == nullptr || tx_cq_ == nullptr || rx_cq_ == nullptr) {
        log_error("fi_enable: bind an address vector and transmit and receive completion queues first");
        return -FI_ENOCQ;
    }
    std::string err;
    const auto job = env_unsigned("HASHI_JOB_ID", 0, UINT64_MAX, 16, err);
    const auto cluster = job ? env_unsigned("HASHI_CLUSTER_ID", 0, 65535, 10, err) : std::nullopt;
    const auto eager =
        cluster ? env_unsigned("FI_HASHI_EAGER_SIZE", 32768, wire::max_eager_payload, 10, err) : std::nullopt;
    const auto chunk =
        eager ? env_unsigned("FI_HASHI_CHUNK_SIZE", 1 << 20, wire::max_chunk_payload, 10, err) : std::nullopt;
    const auto linger = chunk ? env_unsigned("FI_HASHI_CLOSE_TIMEOUT", 30, 3600, 10, err) : std::nullopt;
    const auto listen_any = linger ? env_unsigned("FI_HASHI_LISTEN_ANY", 0, 1, 10, err) : std::nullopt;
    const auto ip = listen_any && pacing_.init(err) ? choose_local_ipv4(err) : std::nullopt;
    if (ip)
        key_ = job_key::from_environment(err);
    if (!ip || !key_) {
        log_error("cannot enable the endpoint: %s", err.c_str());
        return -FI_EINVAL;
    }
    if (*chunk < 4096) {
        log_error("FI_HASHI_CHUNK_SIZE=%llu is too small (at least 4096)", static_cast<unsigned long long>(*chunk));
        return -FI_EINVAL;
    }
    job_id_ = *job;
    close_timeout_s_ = *linger;
    eager_limit_ = *eager;
    chunk_size_ = *chunk;

    // Liveness: the UDP socket of the liveness thread shares the TCP
    // listener's port number (engine/liveness.hpp).
    const auto live = read_liveness_settings(err);
    if (!live) {
        log_error("cannot enable the endpoint: %s", err.c_str());
        return -FI_EINVAL;
    }
    int udp_fd = -1;
    std::uint16_t port = 0;
    // Listen only on the address in the business card: a stranger on
    // another network of this host has no way in (FI_HASHI_LISTEN_ANY=1
    // listens on every address, for hosts whose card address is translated).
    if (!bind_listener_pair(*listen_any != 0 ? INADDR_ANY : *ip, live->enabled(), listen_fd_, udp_fd, port, err)) {
        log_error("%s", err.c_str());
        return -FI_EIO;
    }
    epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd_ < 0) {
        log_error("epoll_create1: %s", std::strerror(errno));
        if (udp_fd >= 0)
            ::close(udp_fd);
        return -FI_EIO;
    }
    epoll_event ev {};
    ev.events = EPOLLIN;
    ev.data.ptr = nullptr; // the listening socket
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev);

    self_addr_.cluster_id = static_cast<std::uint16_t>(*cluster);
    self_addr_.ipv4 = *ip;
    self_addr_.port = port;
    self_addr_.nonce = random64();
    self_key_ = self_addr_.encode();
    if (live->enabled())
        liveness_ = std::make_unique<liveness_monitor>(*live, key_->material(), self_addr_.nonce, udp_fd);
    setup_self();
    enabled_ = true;
    HASHI_DEBUG("endpoint enabled at %s, job %016llx, %s key, eager limit %zu", self_addr_.describe().c_str(),
        static_cast<unsigned long long>(job_id_), key_->is_random() ? "a random" : "the job's", eager_limit_);
    return 0;
}

int endpoint::getname(void* addr, std::size_t* addrlen) const
{
    if (addrlen == nullptr)
        return -FI_EINVAL;
    if (!enabled_)
        return -FI_EOPBADSTATE;
    const std::size_t room = *addrlen;
    *addrlen = address_size;
    if (room < address_size)
        return -FI_ETOOSMALL;
    std::memcpy(addr, self_key_.data(), address_size);
    return 0;
}

int endpoint::setopt(int level, int optname, const void* optval, std::size_t optlen)
{
    if (level != FI_OPT_ENDPOINT)
        return -FI_ENOPROTOOPT;
    if (optname == FI_OPT_MIN_MULTI_RECV) {
        if (optval == nullptr || optlen != sizeof(std::size_t))
            return -FI_EINVAL;
        // Allowed after fi_enable: MPICH sets it once its endpoint is up.
        min_multi_recv_ = *static_cast<const std::size_t*>(optval);
        return 0;
    }
    return -FI_ENOPROTOOPT;
}

int endpoint::getopt(int level, int optname, void* optval, std::size_t* optlen) const
{
    if (level != FI_OPT_ENDPOINT)
        return -FI_ENOPROTOOPT;
    if (optname == FI_OPT_MIN_MULTI_RECV) {
        if (optval == nullptr || optlen == nullptr || *optlen < sizeof(std::size_t))
            return -FI_ETOOSMALL;
        *static_cast<std::size_t*>(optval) = min_multi_recv_;
        *optlen = sizeof(std::size_t);
        return 0;
    }
    return -FI_ENOPROTOOPT;
}

void endpoint::on_av_insert(fi_addr_t index, const endpoint_address& a)
{
    if (by_index_.size() <= index)
        by_index_.resize(index + 1, nullptr);
    const auto key = a.encode();
    av_index_.emplace(key, index);
    auto it = peers_.find(key);
    if (it == peers_.end())
        return; // created on first use, or when it connects
    peer& p = *it->second;
    by_index_[index] = &p;
    if (p.fi_addr == FI_ADDR_NOTAVAIL) {
        // It connected to us before we knew it (dynamic processes): what it
        // sent so far is renumbered so directed receives can match it.
        p.fi_addr = index;
        tagged_.renumber_unexpected(p.unexpected_cookies, index);
        untagged_.renumber_unexpected(p.unexpected_cookies, index);
        p.unexpected_cookies.clear();
    }
}

int endpoint::close()
{
    if (enabled_) {
        closing_ = true;
        // MPICH does not barrier before closing, so the last eager messages
        // may still sit in our queues: deliver them, then tell every peer we
        // are done and wait (bounded) until each has told us the same, so
        // none of their last messages to us is cut off either.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(close_timeout_s_);
        auto queued = [&] {
            for (auto& [k, p] : peers_)
                if (!p->failed && (!p->txq.empty() || p->dialing != nullptr))
                    return true;
            // Rendezvous sends and RMA still waiting for their peer.
            for (auto* m : {&rdv_sends_, &rdv_recvs_, &rma_ops_})
                for (auto& [id, o] : *m)
                    if (!o->p->failed)
                        return true;
            return false;
        };
        while (queued() && std::chrono::steady_clock::now() < deadline)
            if (!progress())
                domain->progress();
        for (auto& [k, p] : peers_)
            if (p->conn != nullptr && !p->failed && !p->is_self) {
                queue_control(*p, wire::frame_type::bye, 0, 0, 0);
                flush(*p);
            }
        // Then wait until every peer has our bytes (nothing left in the
        // kernel's send queue) and has gone quiet or said goodbye too:
        // closing a socket with unread data sends a reset, which can destroy
        // what the peer has not read yet.
        auto last_rx = std::chrono::steady_clock::now();
        for (;;) {
            if (progress())
                last_rx = std::chrono::steady_clock::now();
            bool all_done = true, all_acked = true;
            for (auto& c : conns_) {
                if (c->st != connection::state::open || c->rx_only || (c->p != nullptr && c->p->failed))
                    continue;
                if (c->p != nullptr && c->p->is_self)
                    continue;
                if (!c->bye_received && !c->eof)
                    all_done = false;
                if (unsent_bytes(*c) > 0 || (c->p != nullptr && !c->p->txq.empty()))
                    all_acked = false;
            }
            const auto now = std::chrono::steady_clock::now();
            if (all_done && all_acked)
                break;
            if (all_acked && now - last_rx > std::chrono::milliseconds(200))
                break;
            if (now >= deadline) {
                log_warn("closing the endpoint after %llu s although peers have not received everything; their "
                         "last messages from this process may be lost",
                    static_cast<unsigned long long>(close_timeout_s_));
                break;
            }
        }
        write_stats();
    }
    if (av_ != nullptr) {
        av_->refs--;
        std::erase(av_->endpoints, this);
    }
    for (cq_obj* cq : {tx_cq_, rx_cq_})
        if (cq != nullptr)
            cq->refs--;
    for (cntr_obj* c : {send_cntr_, recv_cntr_, read_cntr_, write_cntr_})
        if (c != nullptr)
            c->refs--;
    std::erase(domain->endpoints, this);
    domain->refs--;
    delete this;
    return 0;
}

std::string peer::describe() const
{
    std::string s =
        fi_addr == FI_ADDR_NOTAVAIL ? std::string("peer (not in the AV)") : "peer " + std::to_string(fi_addr);
    if (pid != 0)
        s += " (pid " + std::to_string(pid) + " on " + host + ", " + addr.describe() + ")";
    else
        s += " (" + addr.describe() + ")";
    return s;
}

op* endpoint::new_op()
{
    op* o;
    if (!free_ops_.empty()) {
        o = free_ops_.back();
        free_ops_.pop_back();
        *o = op {};
    } else {
        o = new op;
    }
    ++ops_live_;
    return o;
}

void endpoint::free_op(op* o)
{
    --ops_live_;
    o->owned.reset();
    if (free_ops_.size() < 1024)
        free_ops_.push_back(o);
    else
        delete o;
}

} // namespace hashi::fi
