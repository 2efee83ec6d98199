// SPDX-License-Identifier: BSD-3-Clause
// scash_barrier: home-based eager release consistency plus dynamic home
// reallocation; and scash_set_home, homes placed by the program.
//
//  1. Every process allgathers its write notices (pages written since the
//     last barrier).
//  2. Every process applies the same rule to the same notices (home.hpp):
//     a page with a single writer other than its home may move its home to
//     that writer. The directory copies stay identical without messages.
//  3. Diffs of pages still dirty go to the (new) home; a writer that just
//     became the home sends nothing: its copy is already the complete one.
//     That saving is the point of the migration.
//  4. Lock notices are reset (this barrier covers them), then MPI_Barrier:
//     after it every home has applied every diff.
//  5. Copies of written pages are dropped, except at the home and at a sole
//     writer (whose copy equals the home's).
#include "scash/runtime.hpp"
#include "scash/wait.hpp"

#include <unordered_map>

namespace hashi::scash {

int barrier(Runtime& rt)
{
    rt.stats.barriers.fetch_add(1, std::memory_order_relaxed);
    const int mine = int(rt.written_interval.size());
    std::vector<int> counts(std::size_t(rt.nprocs)), displs(std::size_t(rt.nprocs));
    // Nonblocking collectives waited for serving (wait.hpp): a process here
    // may still be asked for pages by one that has not arrived yet.
    MPI_Request req = MPI_REQUEST_NULL;
    if (MPI_Iallgather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, rt.coll, &req) != MPI_SUCCESS ||
        !wait_all(rt, {&req, 1}))
        return report(SCASH_ERR_MPI, "scash_barrier", "MPI_Allgather of the write-notice counts failed");
    int total = 0;
    for (int q = 0; q < rt.nprocs; ++q) {
        displs[std::size_t(q)] = total;
        total += counts[std::size_t(q)];
    }
    std::vector<GlobalPage> all(static_cast<std::size_t>(total));
    if (MPI_Iallgatherv(rt.written_interval.data(), mine, MPI_UINT64_T, all.data(), counts.data(), displs.data(),
            MPI_UINT64_T, rt.coll, &req) != MPI_SUCCESS ||
        !wait_all(rt, {&req, 1}))
        return report(SCASH_ERR_MPI, "scash_barrier", "MPI_Allgatherv of the write notices failed");
    for (int q = 1; q < rt.nprocs; ++q)
        rt.stats.count_message(std::uint64_t(mine) * sizeof(GlobalPage) + sizeof(int));

    // page -> its single writer, or -1 for several.
    std::unordered_map<GlobalPage, int> writer;
    writer.reserve(all.size());
    for (int q = 0; q < rt.nprocs; ++q)
        for (int i = 0; i < counts[std::size_t(q)]; ++i) {
            auto [it, fresh] = writer.try_emplace(all[std::size_t(displs[std::size_t(q)] + i)], q);
            if (!fresh && it->second != q)
                it->second = -1;
        }
    for (auto& [g, w] : writer) {
        Region* r = rt.regions.by_id(region_of(g));
        if (!r)
            continue;
        const int before = r->homes.home(page_of(g));
        const int after = r->homes.decide(page_of(g), w, rt.migration);
        if (after != before && after == rt.rank)
            rt.stats.home_moves.fetch_add(1, std::memory_order_relaxed);
    }

    if (!release_writes(rt, [](const Region& r, std::size_t page) { return r.homes.home(page); }))
        return report(SCASH_ERR_MPI, "scash_barrier", "sending diffs to the homes failed");
    lock_notices_reset();
    rt.release_log.clear();
    if (!serving_barrier(rt))
        return report(SCASH_ERR_MPI, "scash_barrier", "MPI_Barrier failed");

    // Protections change together, one mprotect per run of pages.
    std::vector<GlobalPage> to_read_only, to_invalid;
    for (auto& [g, w] : writer) {
        Region* r = rt.regions.by_id(region_of(g));
        if (!r)
            continue;
        const std::size_t page = page_of(g);
        // Written by somebody: no longer the initial zeros here either (a
        // home has applied the diffs).
        r->flags[page] &= std::uint8_t(~(kWrittenInterval | kTwinned | kZeroTwin | kPristine));
        if (r->homes.home(page) == rt.rank || w == rt.rank) {
            if (r->state[page] == PageState::Writable)
                to_read_only.push_back(g);
        } else if (r->state[page] != PageState::Invalid) {
            rt.stats.invalidations.fetch_add(1, std::memory_order_relaxed);
            to_invalid.push_back(g);
        }
    }
    set_protection_runs(rt, to_read_only, PageState::ReadOnly);
    set_protection_runs(rt, to_invalid, PageState::Invalid);
    rt.written_interval.clear();
    return SCASH_OK;
}

// scash_set_home: a barrier, then the new home makes valid copies of the
// pages it lacks (fetched from the old homes, whose copies are the masters
// after the barrier), then every process changes its directory alike. The
// old homes keep valid read-only copies.
int place_homes(Runtime& rt, Region& r, std::size_t first, std::size_t n, int proc)
{
    if (int rc = barrier(rt); rc != SCASH_OK)
        return rc;
    if (proc == rt.rank)
        fetch_copies(rt, r, first, n);
    if (!serving_barrier(rt))
        return report(SCASH_ERR_MPI, "scash_set_home", "MPI_Barrier failed");
    for (std::size_t i = first; i < first + n; ++i)
        r.homes.place(i, proc);
    return SCASH_OK;
}

} // namespace hashi::scash
