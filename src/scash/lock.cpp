// SPDX-License-Identifier: BSD-3-Clause
// Locks, client side. Lock id maps to the manager process id mod nprocs,
// whose service thread queues requests (service.cpp). Eager release: unlock
// first sends the diffs to the homes, then hands the lock its write
// notices; the next holder drops its copies of those pages, so it fetches
// them fresh from their homes.
#include "scash/protocol.hpp"
#include "scash/runtime.hpp"
#include "scash/wait.hpp"

#include <algorithm>
#include <cstring>

namespace hashi::scash {

namespace {

int manager(const Runtime& rt, int id)
{
    return id % rt.nprocs;
}

auto home_target = [](const Region& r, std::size_t page) { return r.homes.home(page); };

auto find_held(Runtime& rt, int id)
{
    return std::find_if(rt.held_locks.begin(), rt.held_locks.end(), [id](const auto& h) { return h.id == id; });
}

} // namespace

int lock_acquire(Runtime& rt, int id)
{
    if (find_held(rt, id) != rt.held_locks.end())
        return report(SCASH_ERR_STATE, "scash_lock", "lock " + std::to_string(id) + " is already held by this process");
    // Releasing first leaves no twinned page, so the notices below can
    // simply drop copies.
    if (!release_writes(rt, home_target))
        return report(SCASH_ERR_MPI, "scash_lock", "sending diffs to the homes failed");
    MsgHeader h {MsgType::LockAcquire, 0, std::uint64_t(id)};
    const int mgr = manager(rt, id);
    MPI_Request sent = MPI_REQUEST_NULL;
    if (isend_bytes(rt, &h, sizeof h, mgr, kTagRequest, sent) != MPI_SUCCESS || !wait_all(rt, {&sent, 1}))
        return report(SCASH_ERR_MPI, "scash_lock", "sending the lock request failed");
    // The grant's size (its notices) is not known ahead.
    MPI_Message m;
    MPI_Status st;
    if (!wait_message(rt, mgr, kTagReply, m, st))
        return report(SCASH_ERR_MPI, "scash_lock", "waiting for the lock grant failed");
    int n = 0;
    MPI_Get_count(&st, MPI_BYTE, &n);
    std::vector<std::byte> msg(static_cast<std::size_t>(n));
    MPI_Mrecv(msg.data(), n, MPI_BYTE, &m, MPI_STATUS_IGNORE);
    const std::size_t count = msg.size() < sizeof h ? 0 : (msg.size() - sizeof h) / sizeof(GlobalPage);
    for (std::size_t i = 0; i < count; ++i) {
        GlobalPage g;
        std::memcpy(&g, msg.data() + sizeof h + i * sizeof g, sizeof g);
        Region* r = rt.regions.by_id(region_of(g));
        if (r && page_of(g) < r->npages && r->homes.home(page_of(g)) != rt.rank)
            invalidate_page(rt, *r, page_of(g));
    }
    rt.held_locks.push_back({id, rt.release_log.size()});
    rt.stats.lock_acquires.fetch_add(1, std::memory_order_relaxed);
    return SCASH_OK;
}

int lock_release(Runtime& rt, int id)
{
    auto it = find_held(rt, id);
    if (it == rt.held_locks.end())
        return report(SCASH_ERR_STATE, "scash_unlock", "lock " + std::to_string(id) + " is not held by this process");
    if (!release_writes(rt, home_target))
        return report(SCASH_ERR_MPI, "scash_unlock", "sending diffs to the homes failed");
    const std::size_t from = it->log_from, n = rt.release_log.size() - from;
    std::vector<std::byte> msg(sizeof(MsgHeader) + n * sizeof(GlobalPage));
    MsgHeader h {MsgType::LockRelease, std::uint32_t(n), std::uint64_t(id)};
    std::memcpy(msg.data(), &h, sizeof h);
    if (n)
        std::memcpy(msg.data() + sizeof h, rt.release_log.data() + from, n * sizeof(GlobalPage));
    const int mgr = manager(rt, id);
    MsgHeader ack;
    MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    if (MPI_Irecv(&ack, sizeof ack, MPI_BYTE, mgr, kTagReply, rt.proto, &reqs[0]) != MPI_SUCCESS ||
        isend_bytes(rt, msg.data(), msg.size(), mgr, kTagRequest, reqs[1]) != MPI_SUCCESS || !wait_all(rt, reqs))
        return report(SCASH_ERR_MPI, "scash_unlock", "releasing the lock failed");
    rt.held_locks.erase(it);
    if (rt.held_locks.empty())
        rt.release_log.clear();
    return SCASH_OK;
}

} // namespace hashi::scash
