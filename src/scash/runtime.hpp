// SPDX-License-Identifier: BSD-3-Clause
// The state of SCASH in one process, shared by the parts (fault handler,
// release, barrier, locks, service thread).
#ifndef HASHI_SCASH_RUNTIME_HPP
#define HASHI_SCASH_RUNTIME_HPP

#include "scash/home.hpp"
#include "scash/region.hpp"
#include "scash/stats.hpp"

#include <mpi.h>

#include <cstddef>
#include <atomic>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace hashi::scash {

struct Runtime {
    MPI_Comm proto = MPI_COMM_NULL; // point-to-point protocol (service thread and requests)
    MPI_Comm coll = MPI_COMM_NULL; // collectives of the application thread
    int rank = 0;
    int nprocs = 1;
    std::size_t page_size = 4096;
    std::size_t max_bytes = 0; // what one process may back
    std::size_t fetch_batch = 2; // pages one read fault may fetch (SCASH_FETCH_PAGES)
    bool print_stats = false; // SCASH_STATS: print the job's statistics at scash_finalize
    std::size_t allocated_bytes = 0;
    std::vector<std::byte> zero_page; // the twin of a page first written while pristine (page_state.hpp)
    MigrationPolicy migration;
    RegionTable regions;
    Stats stats;
    std::thread service;
    // Whose turn it is to poll MPI (wait.hpp): the service thread polls
    // holding `turn`; the application thread holds it while it waits, and
    // raises app_waiting first so that the service thread parks.
    std::mutex turn;
    std::atomic<bool> app_waiting {false};
    // Pages this process wrote since the last barrier / the last release.
    // Reserved ahead so the fault handler never allocates.
    std::vector<GlobalPage> written_interval;
    std::vector<GlobalPage> written_release;
    // Pages released while a lock is held, in order (repeats allowed). An
    // unlock hands the lock the part logged since its acquire: that covers
    // writes an inner lock's acquire or unlock released early, so nested
    // critical sections announce everything to the outer lock. Cleared
    // when no lock is held any more.
    std::vector<GlobalPage> release_log;
    struct HeldLock {
        int id;
        std::size_t log_from;
    };
    std::vector<HeldLock> held_locks;
};

// The runtime, or nullptr before scash_init / after scash_finalize.
Runtime* runtime();
void set_runtime(Runtime* rt);

// Sends a protocol message, counting it (blocking: replies, which the
// requester has a receive posted for).
int send_bytes(Runtime& rt, const void* buf, std::size_t n, int dest, int tag);
// The same without blocking (the application thread's requests, completed
// by wait_all while it serves).
int isend_bytes(Runtime& rt, const void* buf, std::size_t n, int dest, int tag, MPI_Request& req);

// Fault handling (fault.cpp).
bool install_fault_handler();
void remove_fault_handler();
// Makes a region's page unusable until fetched again.
void invalidate_page(Runtime& rt, Region& r, std::size_t page);
void set_protection(Runtime& rt, Region& r, std::size_t page, PageState s, std::size_t n = 1);
// Gives every page of the list protection s with one mprotect per run of
// consecutive pages of a region (sorts the list, then empties it): release
// and barrier change many pages at once, and mprotect is a large part of
// their cost.
void set_protection_runs(Runtime& rt, std::vector<GlobalPage>& pages, PageState s);
// Makes valid copies of the invalid pages among [page, page + n), fetched
// from their homes (one request per run of pages with one home).
void fetch_copies(Runtime& rt, Region& r, std::size_t page, std::size_t n);
void reserve_written_lists(Runtime& rt);

// Release (release.cpp): sends the diffs of the pages written since the last
// release to target(region, page) (the home, or for a barrier the home
// after migration; no diff when that is this process), waits for the
// homes' acks, and turns the pages read-only so the next write is seen.
// Returns false on an MPI failure.
using TargetFn = std::function<int(const Region&, std::size_t)>;
bool release_writes(Runtime& rt, const TargetFn& target);

// Barrier (barrier.cpp) and locks (lock.cpp).
int barrier(Runtime& rt);
// Collective: pages [first, first + n) of r get home proc (scash_set_home).
int place_homes(Runtime& rt, Region& r, std::size_t first, std::size_t n, int proc);
int lock_acquire(Runtime& rt, int id);
int lock_release(Runtime& rt, int id);

// Service thread (service.cpp).
void service_main(Runtime* rt);
// Serves one request from process `from` (either thread, wait.cpp);
// false for Stop.
bool serve_request(Runtime& rt, int from, const std::vector<std::byte>& msg);
void service_stop(Runtime& rt);
// Lock manager state lives with the service thread; the barrier resets
// the write notices it carries.
void lock_notices_reset();

// Reports an error in the user-facing form "scash: <function>: <what>".
int report(int code, const char* function, const std::string& what);

} // namespace hashi::scash
#endif
