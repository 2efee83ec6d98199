// SPDX-License-Identifier: BSD-3-Clause
// The endpoint's side of the liveness checks (engine/liveness.hpp): which
// peers it waits on right now, published to the liveness thread, and the
// verdicts of that thread applied through peer_table::fail.
//
// Progress thread only (called from engine::progress), so it reads the
// provider state without locks; only liveness_monitor's own members are
// shared with the liveness thread.
#include "transport/engine/engine.hpp"
#include "transport/objects.hpp"
#include "transport/path/path.hpp"

#include <algorithm>

namespace hashi::fi {

namespace {
// The waiting set is recomputed at most this often: often enough for a
// timeout of seconds, rarely enough to cost nothing in a busy progress loop.
constexpr std::uint64_t scan_period_ns = 200'000'000ull;
} // namespace

void engine::liveness_progress()
{
    if (liveness_ == nullptr)
        return;
    if (liveness_->has_verdicts())
        for (auto& v : liveness_->take_verdicts())
            apply_liveness_verdict(v.key, v.why);
    // The progress loop's one clock (engine/log_limiter.hpp): coarse, no
    // system call, read once per progress call.
    const std::uint64_t now = monotonic_ns();
    if (now < next_liveness_scan_ns_)
        return;
    next_liveness_scan_ns_ = now + scan_period_ns;
    liveness_->publish(waited_peers());
}

void engine::apply_liveness_verdict(const endpoint_address::bytes& key, const std::string& why)
{
    peer* p = peers_.find(key);
    if (p == nullptr) {
        // Waited on by a directed receive only, never sent to: make the peer
        // now so that failing it ends that receive.
        const auto a = endpoint_address::decode(key.data(), key.size());
        if (!a)
            return;
        p = &peers_.by_address(*a);
    }
    peers_.fail(*p, why, closing_);
}

std::vector<liveness_monitor::watched_peer> engine::waited_peers() const
{
    std::vector<liveness_monitor::watched_peer> out;
    auto add = [&](const endpoint_address& a, const peer* p) {
        if (p != nullptr && (p->is_self || p->failed))
            return;
        const auto key = p != nullptr ? p->key : a.encode();
        if (key == self_.key || std::any_of(out.begin(), out.end(), [&](const auto& w) { return w.key == key; }))
            return;
        liveness_monitor::watched_peer w;
        w.key = key;
        w.ipv4 = a.ipv4;
        w.port = a.port;
        w.cluster = a.cluster_id;
        if (const route r = router_.route_to(a); r.how == route::kind::relay) {
            w.relay_ipv4 = r.ipv4;
            w.relay_port = r.port;
        }
        w.nonce = a.nonce;
        w.rx_bytes = p != nullptr ? p->stats.rx_bytes : 0;
        w.name = p != nullptr ? p->describe() : "peer " + a.describe();
        out.push_back(std::move(w));
    };
    // A receive directed at one source waits on it (wildcards wait on
    // nobody in particular, so they are not counted).
    std::vector<fi_addr_t> sources;
    backend_->directed_sources(sources);
    for (fi_addr_t s : sources) {
        if (const peer* p = peers_.at_index(s))
            add(p->addr, p);
        else if (b_.av != nullptr && s < b_.av->entries.size())
            add(b_.av->entries[s], nullptr);
    }
    // Rendezvous waiting for CTS or data, RMA waiting for its answer.
    ops_.for_each_waiting([&](const op& o) {
        if (o.p != nullptr)
            add(o.p->addr, o.p);
    });
    // Bytes for it not yet sent or not yet acknowledged, or a connection
    // still being made.
    peers_.for_each([&](const peer& p) {
        if (p.is_self || p.failed)
            return;
        bool unsent = false; // on any lane
        for (const path* c : p.paths)
            unsent = unsent || !c->wq.empty() || c->unsent_bytes() > 0;
        if (!p.sched.empty() || p.dialing != nullptr || p.redial_pending || unsent)
            add(p.addr, &p);
    });
    return out;
}

} // namespace hashi::fi
