// SPDX-License-Identifier: BSD-3-Clause
// Eager release: at unlock, flush and barrier, the diffs of every page this
// process wrote since its last release go to the pages' homes, one message
// per home, and the release completes only when every home has applied
// them (acked), so whoever synchronizes with this process next sees them.
#include "scash/diff.hpp"
#include "scash/protocol.hpp"
#include "scash/runtime.hpp"
#include "scash/wait.hpp"

#include <cstring>
#include <map>

namespace hashi::scash {

bool release_writes(Runtime& rt, const TargetFn& target)
{
    // dest -> message under construction (MsgHeader, then entries).
    std::map<int, std::vector<std::byte>> out;
    std::vector<GlobalPage> to_read_only; // turned read-only together, one mprotect per run
    to_read_only.reserve(rt.written_release.size());
    for (GlobalPage g : rt.written_release) {
        Region* r = rt.regions.by_id(region_of(g));
        if (!r)
            continue; // freed since
        const std::size_t page = page_of(g);
        r->flags[page] &= std::uint8_t(~kWrittenRelease);
        if (!rt.held_locks.empty())
            rt.release_log.push_back(g);
        if (r->flags[page] & kTwinned) {
            const int dest = target(*r, page);
            if (dest != rt.rank) {
                auto& msg = out[dest];
                if (msg.empty())
                    msg.resize(sizeof(MsgHeader));
                const std::size_t at = msg.size();
                msg.resize(at + sizeof(DiffEntry));
                const std::byte* twin =
                    r->flags[page] & kZeroTwin ? rt.zero_page.data() : r->twin_page(page, rt.page_size);
                const std::size_t n =
                    encode_diff({twin, rt.page_size}, {r->backing_page(page, rt.page_size), rt.page_size}, msg);
                if (n == 0) {
                    msg.resize(at); // written, but nothing changed: nothing to send
                } else {
                    DiffEntry e {g, std::uint32_t(n), 0};
                    std::memcpy(&msg[at], &e, sizeof e);
                    auto* h = reinterpret_cast<MsgHeader*>(msg.data());
                    h->count++;
                    rt.stats.diffs_sent.fetch_add(1, std::memory_order_relaxed);
                    rt.stats.diff_bytes.fetch_add(n, std::memory_order_relaxed);
                }
            }
            r->flags[page] &= std::uint8_t(~(kTwinned | kZeroTwin));
        }
        if (r->state[page] == PageState::Writable)
            to_read_only.push_back(g);
    }
    rt.written_release.clear();
    set_protection_runs(rt, to_read_only, PageState::ReadOnly);
    std::erase_if(out, [](const auto& m) { return m.second.size() <= sizeof(MsgHeader); });
    // Acks first (posted before the diffs leave), then the diffs; the wait
    // serves this process's own requests meanwhile (wait.hpp).
    std::vector<MPI_Request> reqs;
    std::vector<MsgHeader> acks(out.size());
    reqs.reserve(2 * out.size());
    bool ok = true;
    std::size_t i = 0;
    for (auto& [dest, msg] : out) {
        reqs.push_back(MPI_REQUEST_NULL);
        ok = ok && MPI_Irecv(&acks[i++], sizeof(MsgHeader), MPI_BYTE, dest, kTagReply, rt.proto, &reqs.back()) ==
                MPI_SUCCESS;
    }
    for (auto& [dest, msg] : out) {
        auto* h = reinterpret_cast<MsgHeader*>(msg.data());
        h->type = MsgType::Diffs;
        h->arg = 0;
        reqs.push_back(MPI_REQUEST_NULL);
        ok = ok && isend_bytes(rt, msg.data(), msg.size(), dest, kTagRequest, reqs.back()) == MPI_SUCCESS;
    }
    if (!ok)
        return false; // the job ends with the caller's message; the posted requests go with it
    // The diffs out first, polling (they move only while this process
    // polls), then the acks, backing off.
    const std::span<MPI_Request> acks_pending(reqs.data(), out.size()), sends(reqs.data() + out.size(), out.size());
    return reqs.empty() || (wait_all(rt, sends, Waiting::Sending) && wait_all(rt, acks_pending));
}

} // namespace hashi::scash
