// SPDX-License-Identifier: BSD-3-Clause
// The C API (scash.h): argument and state checks with messages that say
// what to do, then the parts in runtime.hpp. Nothing throws across it.
#include "common/environment.hpp"
#include "scash/protocol.hpp"
#include "scash/runtime.hpp"
#include "scash/scash.h"
#include "scash/wait.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>

namespace hashi::scash {

namespace {

Runtime* the_runtime = nullptr;
bool exit_hook_installed = false;

std::string human(std::size_t bytes)
{
    static const char* const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = double(bytes);
    int u = 0;
    while (v >= 1024 && u < 5) {
        v /= 1024;
        ++u;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", v, units[u]);
    return buf;
}

// A process that leaves without scash_finalize would leave the others
// waiting in a barrier or for a page forever: abort the job instead.
void exit_check()
{
    Runtime* rt = runtime();
    if (!rt)
        return;
    std::fprintf(stderr,
        "scash: process %d is exiting without scash_finalize; aborting the job so the other processes do not wait "
        "for it\n",
        rt->rank);
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized)
        MPI_Abort(MPI_COMM_WORLD, 1);
}

// MPI_Finalize frees MPI_COMM_SELF's attributes first, while MPI still
// works: the one place to catch a program that forgot scash_finalize. (Shutting
// SCASH down from here trips an assertion in MPICH 4.0.2's finalize, so
// this reports the mistake and ends the job instead of failing obscurely.)
int finalize_at_mpi_finalize(MPI_Comm, int, void*, void*)
{
    if (Runtime* rt = runtime()) {
        std::fprintf(stderr,
            "scash: process %d called MPI_Finalize before scash_finalize; call scash_finalize first. Aborting the "
            "job\n",
            rt->rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return MPI_SUCCESS;
}

// SCASH's environment settings into `rt`; false and `why` (naming the
// variable, its value and what is accepted) when one is malformed. Every
// process sees the same environment (mpiexec passes it on), so all of them
// refuse alike and none is left waiting in a collective.
bool read_settings(Runtime& rt, std::string& why)
{
    const auto migration = env_switch("SCASH_MIGRATION", rt.migration.enabled, why);
    if (!migration)
        return false;
    const auto hysteresis =
        env_whole("SCASH_HYSTERESIS", unsigned(rt.migration.hysteresis), {.lo = 1, .hi = 1 << 20}, why);
    if (!hysteresis)
        return false;
    const auto first_move = env_switch("SCASH_FIRST_MOVE", rt.migration.first_move_immediate, why);
    if (!first_move)
        return false;
    const auto fetch = env_whole("SCASH_FETCH_PAGES", rt.fetch_batch, {.lo = 1, .hi = 256}, why);
    if (!fetch)
        return false;
    // 0: not set, the node's share (backing_limit).
    const auto max_bytes = env_whole("SCASH_MAX_BYTES", 0, {.lo = 1, .size_suffix = true, .unit = "bytes"}, why);
    if (!max_bytes)
        return false;
    const auto stats = env_switch("SCASH_STATS", false, why);
    if (!stats)
        return false;
    rt.migration.enabled = *migration;
    rt.migration.hysteresis = int(*hysteresis);
    rt.migration.first_move_immediate = *first_move;
    rt.fetch_batch = std::size_t(*fetch);
    rt.max_bytes = std::size_t(*max_bytes);
    rt.print_stats = *stats;
    return true;
}

// Each process may end up caching every page of every region, so what one
// process can back is its node's memory shared among the processes there.
std::size_t backing_limit(Runtime& rt)
{
    MPI_Comm node;
    int on_node = 1;
    if (MPI_Comm_split_type(rt.coll, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_size(node, &on_node);
        MPI_Comm_free(&node);
    }
    const std::size_t phys = std::size_t(sysconf(_SC_PHYS_PAGES)) * std::size_t(sysconf(_SC_PAGESIZE));
    unsigned long long mine = rt.max_bytes != 0 ? rt.max_bytes : phys / std::size_t(on_node), least = 0;
    serving_allreduce(rt, &mine, &least, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN);
    return std::size_t(least);
}

} // namespace

Runtime* runtime()
{
    return the_runtime;
}
void set_runtime(Runtime* rt)
{
    the_runtime = rt;
}

int report(int code, const char* function, const std::string& what)
{
    std::fprintf(stderr, "scash: %s: %s\n", function, what.c_str());
    return code;
}

int send_bytes(Runtime& rt, const void* buf, std::size_t n, int dest, int tag)
{
    rt.stats.count_message(n);
    return MPI_Send(buf, int(n), MPI_BYTE, dest, tag, rt.proto);
}

int isend_bytes(Runtime& rt, const void* buf, std::size_t n, int dest, int tag, MPI_Request& req)
{
    rt.stats.count_message(n);
    return MPI_Isend(buf, int(n), MPI_BYTE, dest, tag, rt.proto, &req);
}

} // namespace hashi::scash

using namespace hashi::scash;

namespace {

constexpr const char* kInitHint = "call MPI_Init_thread with MPI_THREAD_MULTIPLE, then scash_init, first";

int not_initialized(const char* function)
{
    return report(SCASH_ERR_NOT_INITIALIZED, function, std::string("called before scash_init; ") + kInitHint);
}

// For an error every process detects alike: one message, from process 0.
int report_once(const Runtime& rt, int code, const char* function, const std::string& what)
{
    return rt.rank == 0 ? report(code, function, what) : code;
}

// Agreement of all processes on a local success flag.
bool all_ok(Runtime& rt, bool ok)
{
    int mine = ok ? 1 : 0, all = 0;
    serving_allreduce(rt, &mine, &all, 1, MPI_INT, MPI_MIN);
    return all == 1;
}

// Barriers and other collectives wait for every process: one that holds a
// lock would keep the others from it. SCASH_OK, or the error.
int no_lock_held(const Runtime& rt, const char* function)
{
    if (rt.held_locks.empty())
        return SCASH_OK;
    return report(SCASH_ERR_STATE, function,
        "called while holding lock " + std::to_string(rt.held_locks.front().id) + "; unlock first");
}

// The lowest and highest value of each of n arguments over all processes
// (n <= 4): a collective call's arguments are the same everywhere when
// lo == hi.
struct Spread {
    unsigned long long lo[4], hi[4];
    bool same(int n) const { return std::equal(lo, lo + n, hi); }
};
Spread spread(Runtime& rt, std::initializer_list<unsigned long long> args)
{
    unsigned long long mine[4] = {};
    std::copy(args.begin(), args.end(), mine);
    Spread s;
    serving_allreduce(rt, mine, s.lo, int(args.size()), MPI_UNSIGNED_LONG_LONG, MPI_MIN);
    serving_allreduce(rt, mine, s.hi, int(args.size()), MPI_UNSIGNED_LONG_LONG, MPI_MAX);
    return s;
}

// One agreement on the checks of a collective call: the worst code of all
// processes. An error every process found alike (everywhere) is printed
// once; otherwise by the processes that found it, and the others say so.
int agree(Runtime& rt, int code, bool everywhere, const char* function, const std::string& why)
{
    int worst = SCASH_OK;
    serving_allreduce(rt, &code, &worst, 1, MPI_INT, MPI_MAX);
    if (worst == SCASH_OK)
        return SCASH_OK;
    if (code == SCASH_OK)
        return report_once(rt, worst, function, "another process passed a bad argument (see its message)");
    return everywhere ? report_once(rt, code, function, why) : report(code, function, why);
}

} // namespace

extern "C" {

int scash_init(void)
{
    int initialized = 0, finalized = 0, provided = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (!initialized || finalized)
        return report(SCASH_ERR_MPI, "scash_init", "MPI is not initialized; " + std::string(kInitHint));
    MPI_Query_thread(&provided);
    if (provided != MPI_THREAD_MULTIPLE)
        return report(SCASH_ERR_MPI, "scash_init",
            "MPI provides thread level " + std::to_string(provided) +
                ", SCASH needs MPI_THREAD_MULTIPLE for its service thread; initialize MPI with MPI_Init_thread");
    if (runtime())
        return report(SCASH_ERR_STATE, "scash_init", "SCASH is already initialized");
    auto* rt = new Runtime;
    MPI_Comm_dup(MPI_COMM_WORLD, &rt->coll);
    MPI_Comm_dup(MPI_COMM_WORLD, &rt->proto);
    MPI_Comm_rank(rt->coll, &rt->rank);
    MPI_Comm_size(rt->coll, &rt->nprocs);
    rt->page_size = std::size_t(sysconf(_SC_PAGESIZE));
    rt->zero_page.assign(rt->page_size, std::byte {0});
    std::string why;
    if (!read_settings(*rt, why)) {
        MPI_Comm_free(&rt->coll);
        MPI_Comm_free(&rt->proto);
        delete rt;
        return report(SCASH_ERR_ARG, "scash_init", why);
    }
    rt->max_bytes = backing_limit(*rt);
    const bool reserved = rt->regions.reserve(why);
    if (!all_ok(*rt, reserved)) {
        if (!reserved)
            report(SCASH_ERR_NOMEM, "scash_init", why);
        rt->regions.release();
        MPI_Comm_free(&rt->coll);
        MPI_Comm_free(&rt->proto);
        delete rt;
        return SCASH_ERR_NOMEM;
    }
    set_runtime(rt);
    install_fault_handler();
    rt->service = std::thread(service_main, rt);
    if (!exit_hook_installed) {
        std::atexit(exit_check);
        exit_hook_installed = true;
    }
    int keyval = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalize_at_mpi_finalize, &keyval, nullptr);
    MPI_Comm_set_attr(MPI_COMM_SELF, keyval, nullptr);
    MPI_Comm_free_keyval(&keyval);
    serving_barrier(*rt);
    return SCASH_OK;
}

int scash_finalize(void)
{
    Runtime* rt = runtime();
    if (!rt)
        return report(SCASH_ERR_NOT_INITIALIZED, "scash_finalize", "SCASH is not initialized");
    // Pending writes reach their homes like at a barrier; then nobody sends
    // requests any more and the service threads can stop.
    barrier(*rt);
    if (rt->print_stats)
        scash_stats_print("scash");
    serving_barrier(*rt);
    service_stop(*rt);
    set_runtime(nullptr);
    remove_fault_handler();
    rt->regions.release();
    MPI_Comm_free(&rt->coll);
    MPI_Comm_free(&rt->proto);
    delete rt;
    return SCASH_OK;
}

int scash_initialized(void)
{
    return runtime() != nullptr;
}
int scash_rank(void)
{
    return runtime() ? runtime()->rank : -1;
}
int scash_nprocs(void)
{
    return runtime() ? runtime()->nprocs : 0;
}

int scash_alloc(size_t size, int dist, void** ptr)
{
    if (ptr)
        *ptr = nullptr;
    Runtime* rt = runtime();
    if (!rt)
        return not_initialized("scash_alloc");
    std::string why;
    if (!ptr)
        why = "ptr is NULL; pass the address of a pointer that receives the region";
    else if (size == 0)
        why = "size is 0";
    else if (dist != SCASH_BLOCK && dist != SCASH_CYCLIC && dist != SCASH_FIRST_TOUCH)
        why = "dist " + std::to_string(dist) + " is not SCASH_BLOCK, SCASH_CYCLIC or SCASH_FIRST_TOUCH";
    // Collective: every process must ask for the same thing.
    const Spread args = spread(*rt, {size, static_cast<unsigned long long>(dist)});
    bool everywhere = false; // an error every process sees alike is printed once
    if (why.empty() && !args.same(2)) {
        why = "the processes passed different sizes or distributions (sizes " + std::to_string(args.lo[0]) + " to " +
            std::to_string(args.hi[0]) + "); scash_alloc is collective, call it with the same arguments everywhere";
        everywhere = true;
    }
    const std::size_t npages = (size + rt->page_size - 1) / rt->page_size;
    const std::size_t bytes = npages * rt->page_size;
    int code = why.empty() ? SCASH_OK : SCASH_ERR_ARG;
    if (code == SCASH_OK && (size > rt->max_bytes || rt->allocated_bytes + bytes > rt->max_bytes)) {
        code = SCASH_ERR_NOMEM;
        everywhere = true; // same size, limit and total on every process
        why = human(size) + " requested (" + human(rt->allocated_bytes) +
            " already allocated) but a process can back at most " + human(rt->max_bytes) +
            " (its node's memory divided among the processes there, or SCASH_MAX_BYTES): every process may cache "
            "the whole region; allocate less or run fewer processes per node";
    }
    if (int rc = agree(*rt, code, everywhere, "scash_alloc", why); rc != SCASH_OK)
        return rc;
    Region* r = rt->regions.create(npages, rt->page_size, dist, rt->nprocs, why);
    if (!all_ok(*rt, r != nullptr)) {
        if (r)
            rt->regions.destroy(r);
        return report(SCASH_ERR_NOMEM, "scash_alloc", r ? "another process could not map the region" : why);
    }
    rt->allocated_bytes += bytes;
    reserve_written_lists(*rt);
    serving_barrier(*rt);
    *ptr = r->app;
    return SCASH_OK;
}

int scash_free(void* ptr)
{
    Runtime* rt = runtime();
    if (!rt)
        return not_initialized("scash_free");
    Region* r = rt->regions.find(ptr);
    const bool ok = r && r->app == ptr;
    if (!all_ok(*rt, ok))
        return report(SCASH_ERR_ARG, "scash_free",
            ok ? "another process passed a pointer that is not a region"
               : "the pointer is not the start of a region from scash_alloc");
    // Writes to it are settled (and forgotten) like at a barrier.
    if (int rc = barrier(*rt); rc != SCASH_OK)
        return rc;
    rt->allocated_bytes -= r->bytes;
    rt->regions.destroy(r);
    serving_barrier(*rt);
    return SCASH_OK;
}

int scash_barrier(void)
{
    Runtime* rt = runtime();
    if (!rt)
        return not_initialized("scash_barrier");
    if (int rc = no_lock_held(*rt, "scash_barrier"); rc != SCASH_OK)
        return rc;
    return barrier(*rt);
}

int scash_lock(int lock_id)
{
    Runtime* rt = runtime();
    if (!rt)
        return not_initialized("scash_lock");
    if (lock_id < 0)
        return report(SCASH_ERR_ARG, "scash_lock", "lock id " + std::to_string(lock_id) + " is negative");
    return lock_acquire(*rt, lock_id);
}

int scash_unlock(int lock_id)
{
    Runtime* rt = runtime();
    if (!rt)
        return not_initialized("scash_unlock");
    return lock_release(*rt, lock_id);
}

int scash_flush(void)
{
    Runtime* rt = runtime();
    if (!rt)
        return not_initialized("scash_flush");
    if (!release_writes(*rt, [](const Region& r, std::size_t page) { return r.homes.home(page); }))
        return report(SCASH_ERR_MPI, "scash_flush", "sending diffs to the homes failed");
    return SCASH_OK;
}

int scash_set_migration(int on, int hysteresis)
{
    Runtime* rt = runtime();
    if (!rt)
        return not_initialized("scash_set_migration");
    if (hysteresis < 1)
        return report(
            SCASH_ERR_ARG, "scash_set_migration", "hysteresis must be at least 1 (1 moves at the first barrier)");
    rt->migration.enabled = on != 0;
    rt->migration.hysteresis = hysteresis;
    return SCASH_OK;
}

int scash_set_home(void* addr, size_t size, int proc)
{
    Runtime* rt = runtime();
    if (!rt)
        return not_initialized("scash_set_home");
    if (int rc = no_lock_held(*rt, "scash_set_home"); rc != SCASH_OK)
        return rc;
    Region* r = rt->regions.find(addr);
    std::string why;
    std::size_t offset = 0;
    if (!r)
        why = "the address is not in a region from scash_alloc";
    else if (size == 0)
        why = "size is 0";
    else if (offset = std::size_t(static_cast<std::byte*>(addr) - r->app); size > r->bytes - offset)
        why = "the range (" + human(size) + ") runs past the end of its region";
    else if (proc < 0 || proc >= rt->nprocs)
        why = "process " + std::to_string(proc) + " is not in 0.." + std::to_string(rt->nprocs - 1);
    // Collective: every process must ask for the same thing.
    const Spread args =
        spread(*rt, {reinterpret_cast<std::uintptr_t>(addr), size, static_cast<unsigned long long>(proc)});
    bool everywhere = false;
    if (why.empty() && !args.same(3)) {
        why = "the processes passed different ranges or processes; scash_set_home is collective, call it with the "
              "same arguments everywhere";
        everywhere = true;
    }
    if (int rc = agree(*rt, why.empty() ? SCASH_OK : SCASH_ERR_ARG, everywhere, "scash_set_home", why); rc != SCASH_OK)
        return rc;
    const std::size_t first = offset / rt->page_size, last = (offset + size - 1) / rt->page_size;
    return place_homes(*rt, *r, first, last - first + 1, proc);
}

int scash_stats_local(scash_stats_t* out)
{
    Runtime* rt = runtime();
    if (!rt)
        return not_initialized("scash_stats_local");
    if (!out)
        return report(SCASH_ERR_ARG, "scash_stats_local", "out is NULL");
    *out = rt->stats.snapshot();
    return SCASH_OK;
}

int scash_stats_total(scash_stats_t* out)
{
    Runtime* rt = runtime();
    if (!rt)
        return not_initialized("scash_stats_total");
    if (!out)
        return report(SCASH_ERR_ARG, "scash_stats_total", "out is NULL");
    scash_stats_t mine = rt->stats.snapshot();
    static_assert(sizeof(scash_stats_t) % sizeof(uint64_t) == 0);
    serving_allreduce(*rt, &mine, out, int(sizeof mine / sizeof(uint64_t)), MPI_UINT64_T, MPI_SUM);
    return SCASH_OK;
}

int scash_stats_print(const char* label)
{
    scash_stats_t s;
    if (int rc = scash_stats_total(&s); rc != SCASH_OK)
        return rc;
    if (runtime()->rank == 0)
        std::fprintf(stderr,
            "%s: stats: read_faults=%llu write_faults=%llu pages_fetched=%llu diffs=%llu diff_bytes=%llu "
            "home_moves=%llu invalidations=%llu barriers=%llu locks=%llu messages=%llu bytes=%llu\n",
            label ? label : "scash", (unsigned long long)s.read_faults, (unsigned long long)s.write_faults,
            (unsigned long long)s.pages_fetched, (unsigned long long)s.diffs_sent, (unsigned long long)s.diff_bytes,
            (unsigned long long)s.home_moves, (unsigned long long)s.invalidations,
            (unsigned long long)s.barriers / std::max(1, runtime()->nprocs), (unsigned long long)s.lock_acquires,
            (unsigned long long)s.messages, (unsigned long long)s.bytes);
    return SCASH_OK;
}

int scash_home_of(const void* addr)
{
    Runtime* rt = runtime();
    Region* r = rt ? rt->regions.find(addr) : nullptr;
    if (!r)
        return -1;
    return r->homes.home(std::size_t(static_cast<const std::byte*>(addr) - r->app) / rt->page_size);
}

} // extern "C"
