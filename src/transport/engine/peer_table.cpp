// SPDX-License-Identifier: BSD-3-Clause
// The peer table (peer_table.hpp).
#include "transport/engine/peer_table.hpp"

#include "transport/path/path.hpp"

#include "transport/common.hpp"
#include "transport/engine/router.hpp"

namespace hashi::fi {

path* peer::lane_path(std::uint8_t lane) const noexcept
{
    for (path* c : paths)
        if (c->lane == lane)
            return c;
    return nullptr;
}

std::string peer::describe() const
{
    std::string s =
        fi_addr == FI_ADDR_NOTAVAIL ? std::string("peer (not in the AV)") : "peer " + std::to_string(fi_addr);
    if (pid != 0)
        s += " (pid " + std::to_string(pid) + " on " + host + ", " + addr.describe() + ")";
    else
        s += " (" + addr.describe() + ")";
    if (!via.empty())
        s += " " + via;
    return s;
}

peer* peer_table::find(const endpoint_address::bytes& key) const noexcept
{
    auto it = peers_.find(key);
    return it == peers_.end() ? nullptr : it->second.get();
}

peer& peer_table::by_address(const endpoint_address& a)
{
    const auto key = a.encode();
    if (peer* p = find(key))
        return *p;
    auto p = std::make_unique<peer>(a, chunk_size_);
    p->via = routes_.note(a);
    // Already in the AV (it connected before we sent to it): number it now,
    // so directed receives match what it sends.
    if (auto known = av_index_.find(key); known != av_index_.end()) {
        p->fi_addr = known->second;
        if (by_index_.size() <= known->second)
            by_index_.resize(known->second + 1, nullptr);
        by_index_[known->second] = p.get();
    }
    peer& ref = *p;
    peers_.emplace(key, std::move(p));
    return ref;
}

peer& peer_table::add_self(const endpoint_address& a)
{
    peer& p = by_address(a);
    p.is_self = true;
    return p;
}

peer* peer_table::for_index(fi_addr_t dest, const std::vector<endpoint_address>& av_entries, int& err)
{
    if (peer* p = at_index(dest))
        return p;
    if (dest >= av_entries.size()) {
        log_error("send to fi_addr %llu, which is not in the address vector (%zu entries)",
            static_cast<unsigned long long>(dest), av_entries.size());
        err = -FI_EINVAL;
        return nullptr;
    }
    peer& p = by_address(av_entries[dest]);
    if (by_index_.size() <= dest)
        by_index_.resize(dest + 1, nullptr);
    by_index_[dest] = &p;
    if (p.fi_addr == FI_ADDR_NOTAVAIL)
        p.fi_addr = dest;
    return &p;
}

peer* peer_table::on_av_insert(fi_addr_t index, const endpoint_address& a)
{
    if (by_index_.size() <= index)
        by_index_.resize(index + 1, nullptr);
    const auto key = a.encode();
    av_index_.emplace(key, index);
    peer* p = find(key);
    if (p == nullptr)
        return nullptr; // made on first use, or when it connects
    by_index_[index] = p;
    if (p->fi_addr != FI_ADDR_NOTAVAIL)
        return nullptr;
    p->fi_addr = index;
    return p;
}

void peer_table::fail(peer& p, const std::string& why, bool closing)
{
    if (p.failed)
        return;
    p.failed = true;
    p.failure = why;
    if (closing)
        log_warn("while closing: %s: %s", p.describe().c_str(), why.c_str());
    else
        log_error("lost %s: %s", p.describe().c_str(), why.c_str());
    for (auto* l : listeners_)
        l->peer_failed(p);
}

} // namespace hashi::fi
