// SPDX-License-Identifier: BSD-3-Clause
// The endpoint facade's lifecycle: creation, binding to AV/CQ/counters,
// enabling (settings, the listening socket, the business card, the
// engine), options, and close (the engine delivers what is queued first).
#include "common/environment.hpp"
#include "transport/domain_gate.hpp"
#include "transport/endpoint.hpp"

#include "transport/engine/local_address.hpp"
#include "transport/engine/relay_set.hpp"
#include "transport/ep_ops.hpp"
#include "transport/wire/handshake.hpp"

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
    .close = gated<ep_close>,
    .bind = gated<ep_bind>,
    .control = gated<ep_control>,
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
    if (info != nullptr)
        directed_recv_ = ((info->caps | (info->rx_attr != nullptr ? info->rx_attr->caps : 0)) & FI_DIRECTED_RECV) != 0;
    char host[wire::host_name_size] = {};
    gethostname(host, sizeof host - 1);
    host_ = host;
    // mpiexec's exec launcher names emulated nodes; messages use that name.
    if (const char* n = std::getenv("HASHI_NODE_NAME"); n != nullptr && *n != '\0')
        host_ = std::string(n).substr(0, wire::host_name_size - 1);
    dom->endpoints.push_back(this);
    dom->refs++;
}

endpoint::~endpoint() = default;

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
    if (engine_)
        return -FI_EOPBADSTATE;
    switch (bfid->fclass) {
    case FI_CLASS_AV: {
        if (bound_.av != nullptr)
            return -FI_EINVAL;
        bound_.av = owner_of<av_obj>(reinterpret_cast<fid_av*>(bfid));
        bound_.av->refs++;
        bound_.av->endpoints.push_back(this);
        return 0;
    }
    case FI_CLASS_CQ: {
        auto* cq = owner_of<cq_obj>(reinterpret_cast<fid_cq*>(bfid));
        if ((flags & ~(FI_SEND | FI_RECV | FI_SELECTIVE_COMPLETION | FI_TRANSMIT | FI_RECV)) != 0)
            return -FI_EBADFLAGS;
        if (flags & (FI_SEND | FI_TRANSMIT)) {
            bound_.tx_cq = cq;
            tx_selective_ = flags & FI_SELECTIVE_COMPLETION;
            cq->refs++;
        }
        if (flags & FI_RECV) {
            bound_.rx_cq = cq;
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
            set(bound_.send_cntr);
        if (flags & FI_RECV)
            set(bound_.recv_cntr);
        if (flags & FI_READ)
            set(bound_.read_cntr);
        if (flags & FI_WRITE)
            set(bound_.write_cntr);
        return 0;
    }
    default:
        return -FI_EINVAL;
    }
}

int endpoint::enable()
{
    if (engine_)
        return 0;
    if (bound_.av == nullptr || bound_.tx_cq == nullptr || bound_.rx_cq == nullptr) {
        log_error("fi_enable: bind an address vector and transmit and receive completion queues first");
        return -FI_ENOCQ;
    }
    std::string err;
    const auto job = hashi::env_whole("HASHI_JOB_ID", 0, {.hi = UINT64_MAX, .base = 16}, err);
    const auto cluster = job ? hashi::env_whole("HASHI_CLUSTER_ID", 0, {.hi = 65535, .base = 10}, err) : std::nullopt;
    const auto eager =
        cluster ? hashi::env_whole("FI_HASHI_EAGER_SIZE", 32768, {.hi = wire::max_eager_payload, .base = 10}, err) : std::nullopt;
    const auto chunk =
        eager ? hashi::env_whole("FI_HASHI_CHUNK_SIZE", 1 << 20, {.hi = wire::max_chunk_payload, .base = 10}, err) : std::nullopt;
    // Transfers to a peer behind several trunks from this size on are
    // striped over all of them (engine/router.hpp); 0: never.
    const auto stripe_min =
        chunk ? hashi::env_whole("FI_HASHI_STRIPE_MIN", 64 << 10, {.hi = std::uint64_t {1} << 40, .base = 10}, err)
              : std::nullopt;
    const auto linger = stripe_min ? hashi::env_whole("FI_HASHI_CLOSE_TIMEOUT", 30, {.hi = 3600, .base = 10}, err) : std::nullopt;
    const auto listen_any = linger ? hashi::env_whole("FI_HASHI_LISTEN_ANY", 0, {.hi = 1, .base = 10}, err) : std::nullopt;
    const auto protect_local = listen_any ? hashi::env_whole("FI_HASHI_PROTECT_LOCAL", 0, {.hi = 1, .base = 10}, err) : std::nullopt;
    const auto read_first = protect_local ? hashi::env_whole("FI_HASHI_READ_FIRST", 0, {.hi = 1, .base = 10}, err) : std::nullopt;
    const auto coalesce = read_first ? hashi::env_whole("FI_HASHI_SEND_COALESCE", 1, {.hi = 1, .base = 10}, err) : std::nullopt;
    const auto protection = coalesce
        ? secure::protection_from_environment(secure::default_wan_protection, err)
        : std::nullopt;
    wan_pacing pacing;
    const auto ip = protection && pacing.init(err) ? choose_local_ipv4(err) : std::nullopt;
    const auto relays = ip ? relays_from_environment(err) : std::nullopt;
    std::optional<job_key> key;
    if (relays)
        key = job_key::from_environment(err);
    if (!relays || !key) {
        log_error("cannot enable the endpoint: %s", err.c_str());
        return -FI_EINVAL;
    }
    if (*chunk < 4096) {
        log_error("FI_HASHI_CHUNK_SIZE=%llu is too small (at least 4096)", static_cast<unsigned long long>(*chunk));
        return -FI_EINVAL;
    }
    if (*stripe_min != 0 && *stripe_min < 4096) {
        log_error("FI_HASHI_STRIPE_MIN=%llu is too small (0 to turn striping off, else at least 4096)",
            static_cast<unsigned long long>(*stripe_min));
        return -FI_EINVAL;
    }
    engine_settings settings;
    settings.job_id = *job;
    settings.stripe_min = *stripe_min;
    settings.cluster_id = static_cast<std::uint16_t>(*cluster);
    settings.close_timeout_s = *linger;
    settings.eager_limit = *eager;
    settings.chunk_size = *chunk;
    settings.protection.level = *protection;
    settings.protection.local = *protect_local != 0;
    settings.relays = *relays;
    settings.read_first = *read_first != 0;
    settings.send_coalescing = *coalesce != 0;
    const auto recv_backend =
        recv_backend_from_environment(settings.relays.empty() && !settings.protection.local, err);
    if (!recv_backend) {
        log_error("cannot enable the endpoint: %s", err.c_str());
        return -FI_EINVAL;
    }
    settings.recv_backend = *recv_backend;

    // Liveness: the UDP socket of the liveness thread shares the TCP
    // listener's port number (engine/liveness.hpp).
    const auto live = read_liveness_settings(err);
    if (!live) {
        log_error("cannot enable the endpoint: %s", err.c_str());
        return -FI_EINVAL;
    }
    int listen_fd = -1, udp_fd = -1;
    std::uint16_t port = 0;
    // Listen only on the address in the business card: a stranger on
    // another network of this host has no way in (FI_HASHI_LISTEN_ANY=1
    // listens on every address, for hosts whose card address is translated).
    if (!bind_listener_pair(*listen_any != 0 ? INADDR_ANY : *ip, live->enabled(), listen_fd, udp_fd, port, err)) {
        log_error("%s", err.c_str());
        return -FI_EIO;
    }
    endpoint_identity self;
    self.addr.cluster_id = settings.cluster_id;
    self.addr.ipv4 = *ip;
    self.addr.port = port;
    self.addr.nonce = random64();
    if (!settings.relays.empty()) {
        // Behind relays: peers of other clusters reach this endpoint through
        // their relays and ours; the card names relay 0 (engine/router.hpp).
        self.addr.via_relay = true;
        self.addr.relay_ipv4 = settings.relays.front().ipv4;
        self.addr.relay_port = settings.relays.front().port;
    }
    self.key = self.addr.encode();
    self.job_id = settings.job_id;
    self.host = host_;
    try {
        engine_ = std::make_unique<engine>(
            *domain, bound_, min_multi_recv_, settings, self, *key, listen_fd, *live, udp_fd, pacing);
    } catch (const std::exception& e) {
        log_error("cannot enable the endpoint: %s", e.what());
        return -FI_EIO;
    }
    // Held sends leave within held_flusher::bound_ns even if the
    // application never calls again (engine/held_flusher.hpp).
    if (settings.send_coalescing) {
        try {
            domain->start_flusher();
        } catch (const std::exception& e) {
            engine_.reset();
            log_error("cannot enable the endpoint: cannot start the thread that bounds held sends: %s", e.what());
            return -FI_EIO;
        }
    }
    // Addresses inserted before fi_enable.
    for (std::size_t i = 0; i < bound_.av->entries.size(); ++i)
        engine_->on_av_insert(i, bound_.av->entries[i]);
    HASHI_DEBUG("endpoint enabled at %s, job %016llx, %s key, eager limit %zu", self.addr.describe().c_str(),
        static_cast<unsigned long long>(settings.job_id), key->is_random() ? "a random" : "the job's",
        settings.eager_limit);
    for (std::size_t t = 0; t < settings.relays.size(); ++t)
        HASHI_DEBUG("trunk %zu: the relay at %s (%s)", t, settings.relays[t].describe().c_str(), relays_variable);
    return 0;
}

int endpoint::getname(void* addr, std::size_t* addrlen) const
{
    if (addrlen == nullptr)
        return -FI_EINVAL;
    if (!engine_)
        return -FI_EOPBADSTATE;
    const std::size_t room = *addrlen;
    *addrlen = address_size;
    if (room < address_size)
        return -FI_ETOOSMALL;
    std::memcpy(addr, engine_->self().key.data(), address_size);
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

int endpoint::close()
{
    if (engine_) {
        engine_->drain_and_close();
        engine_.reset();
    }
    if (bound_.av != nullptr) {
        bound_.av->refs--;
        std::erase(bound_.av->endpoints, this);
    }
    for (cq_obj* cq : {bound_.tx_cq, bound_.rx_cq})
        if (cq != nullptr)
            cq->refs--;
    for (cntr_obj* c : {bound_.send_cntr, bound_.recv_cntr, bound_.read_cntr, bound_.write_cntr})
        if (c != nullptr)
            c->refs--;
    std::erase(domain->endpoints, this);
    domain->refs--;
    delete this;
    return 0;
}

} // namespace hashi::fi
