// SPDX-License-Identifier: BSD-3-Clause
// The service thread: answers page requests from the backing view, applies
// diffs to the master copies this process is home of, and manages the locks
// whose id maps to this process (id mod nprocs). It runs until a Stop
// message from its own process.
//
// Requests are served here and, while the application thread waits in
// SCASH, by the application thread itself (wait.hpp: only one thread of a
// process polls MPI at a time).
#include "scash/diff.hpp"
#include "scash/protocol.hpp"
#include "scash/runtime.hpp"
#include "scash/wait.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <unordered_set>
#include <vector>

namespace hashi::scash {

namespace {

struct LockState {
    bool held = false;
    std::deque<int> waiters;
    // Pages written under this lock since the last barrier: the next holder
    // drops its copies of them (write notices carried by the lock).
    std::vector<GlobalPage> notices;
    std::unordered_set<GlobalPage> notice_set;
};

std::mutex locks_mutex; // the barrier resets notices from the application thread
std::map<int, LockState> locks;

void grant(Runtime& rt, int to, LockState& l)
{
    std::vector<std::byte> msg(sizeof(MsgHeader) + l.notices.size() * sizeof(GlobalPage));
    MsgHeader h {MsgType::LockGrant, std::uint32_t(l.notices.size()), 0};
    std::memcpy(msg.data(), &h, sizeof h);
    if (!l.notices.empty())
        std::memcpy(msg.data() + sizeof h, l.notices.data(), l.notices.size() * sizeof(GlobalPage));
    l.held = true;
    send_bytes(rt, msg.data(), msg.size(), to, kTagReply);
}

void ack(Runtime& rt, int to)
{
    MsgHeader h {MsgType::Ack, 0, 0};
    send_bytes(rt, &h, sizeof h, to, kTagReply);
}

void corrupt(int from, const char* what)
{
    std::fprintf(stderr, "scash: service thread: malformed %s message from process %d ignored\n", what, from);
}

void apply_diffs(Runtime& rt, int from, const std::vector<std::byte>& msg, std::uint32_t count)
{
    std::size_t at = sizeof(MsgHeader);
    for (std::uint32_t i = 0; i < count; ++i) {
        DiffEntry e;
        if (msg.size() - at < sizeof e)
            return corrupt(from, "diff");
        std::memcpy(&e, &msg[at], sizeof e);
        at += sizeof e;
        Region* r = rt.regions.by_id(region_of(e.page));
        if (e.bytes > msg.size() - at || !r || page_of(e.page) >= r->npages)
            return corrupt(from, "diff");
        if (!apply_diff({&msg[at], e.bytes}, {r->backing_page(page_of(e.page), rt.page_size), rt.page_size}))
            return corrupt(from, "diff");
        at += e.bytes;
    }
}

} // namespace

bool serve_request(Runtime& rt, int from, const std::vector<std::byte>& msg)
{
    MsgHeader h;
    if (msg.size() < sizeof h) {
        corrupt(from, "short");
        return true;
    }
    std::memcpy(&h, msg.data(), sizeof h);
    switch (h.type) {
    case MsgType::PageGet: {
        // count pages from arg on (0 counts as 1), contiguous in the reply.
        Region* r = rt.regions.by_id(region_of(h.arg));
        const std::size_t n = std::max<std::size_t>(h.count, 1), first = page_of(h.arg);
        if (!r || first >= r->npages || n > r->npages - first) {
            // Answer anyway so the requester does not wait forever; it gets
            // zeros (a short reply for an absurd count).
            std::vector<std::byte> zeros(std::min<std::size_t>(n, 256) * rt.page_size);
            corrupt(from, "page request");
            send_bytes(rt, zeros.data(), zeros.size(), from, kTagReply);
            break;
        }
        send_bytes(rt, r->backing_page(first, rt.page_size), n * rt.page_size, from, kTagReply);
        break;
    }
    case MsgType::Diffs:
        apply_diffs(rt, from, msg, h.count);
        ack(rt, from);
        break;
    case MsgType::LockAcquire: {
        std::lock_guard g(locks_mutex);
        LockState& l = locks[int(h.arg)];
        if (l.held)
            l.waiters.push_back(from);
        else
            grant(rt, from, l);
        break;
    }
    case MsgType::LockRelease: {
        std::lock_guard g(locks_mutex);
        LockState& l = locks[int(h.arg)];
        const std::size_t n = std::min<std::size_t>(h.count, (msg.size() - sizeof h) / sizeof(GlobalPage));
        for (std::size_t i = 0; i < n; ++i) {
            GlobalPage p;
            std::memcpy(&p, msg.data() + sizeof h + i * sizeof p, sizeof p);
            if (l.notice_set.insert(p).second)
                l.notices.push_back(p);
        }
        l.held = false;
        ack(rt, from);
        if (!l.waiters.empty()) {
            const int next = l.waiters.front();
            l.waiters.pop_front();
            grant(rt, next, l);
        }
        break;
    }
    case MsgType::Stop:
        return false;
    default:
        corrupt(from, "unknown");
    }
    return true;
}

void lock_notices_reset()
{
    std::lock_guard g(locks_mutex);
    for (auto& [id, l] : locks) {
        l.notices.clear();
        l.notice_set.clear();
    }
}

void service_main(Runtime* rt)
{
    serve_until_stopped(*rt);
}

void service_stop(Runtime& rt)
{
    MsgHeader h {MsgType::Stop, 0, 0};
    MPI_Send(&h, sizeof h, MPI_BYTE, rt.rank, kTagRequest, rt.proto);
    if (rt.service.joinable())
        rt.service.join();
    std::lock_guard g(locks_mutex);
    locks.clear();
}

} // namespace hashi::scash
