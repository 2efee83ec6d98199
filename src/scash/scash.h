/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SCASH: page-based software distributed shared memory over MPI.
 *
 * A program calls MPI_Init_thread(..., MPI_THREAD_MULTIPLE, ...), then
 * scash_init(). Shared regions are allocated collectively (every process
 * calls scash_alloc with the same size and distribution, in the same order)
 * and appear at the same virtual address in every process, so pointers into
 * them may be stored in shared memory.
 *
 * Consistency is release consistency: writes become visible to the other
 * processes at scash_barrier, and to the next holder of a lock at
 * scash_unlock. Programs must be data-race free under those rules.
 *
 * Rules: one thread per process calls SCASH; never pass a pointer into a
 * shared region to an MPI call or a system call (read, write, ...): MPI and
 * the kernel do not raise the page faults SCASH relies on. Copy through
 * private memory instead.
 *
 * Every function returns SCASH_OK or an error code, and prints what was wrong
 * to stderr. From Fortran, `use scash` (scash.f90, installed next to this
 * header, compiled with the program): scash_alloc gives a c_ptr; map it
 * with c_f_pointer.
 */
#ifndef HASHI_SCASH_H
#define HASHI_SCASH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes. */
#define SCASH_OK 0
#define SCASH_ERR_NOT_INITIALIZED 1 /* scash_init was not called (or scash_finalize was) */
#define SCASH_ERR_ARG 2 /* a bad argument; the message says which */
#define SCASH_ERR_NOMEM 3 /* the job cannot back the allocation */
#define SCASH_ERR_MPI 4 /* MPI is not initialized with MPI_THREAD_MULTIPLE, or an MPI call failed */
#define SCASH_ERR_STATE 5 /* called twice, or in the wrong state (e.g. unlock of a lock not held) */

/* Initial home distribution of a region's pages. */
#define SCASH_BLOCK 0 /* contiguous chunks: process p is home of the p-th of nprocs equal parts */
#define SCASH_CYCLIC 1 /* page i lives on process i mod nprocs */
#define SCASH_FIRST_TOUCH 2 /* a page's home is its first writer (decided at the barrier after the write) */

/* Per-process counters; scash_stats_total sums them over the job. */
typedef struct scash_stats {
    uint64_t read_faults; /* faults on pages without a valid copy */
    uint64_t write_faults; /* first writes to a page in an interval */
    uint64_t pages_fetched; /* pages copied from their home */
    uint64_t diffs_sent; /* page diffs sent to homes */
    uint64_t diff_bytes; /* bytes of encoded diffs sent */
    uint64_t home_moves; /* pages whose home moved to this process */
    uint64_t invalidations; /* cached copies dropped */
    uint64_t barriers; /* scash_barrier calls */
    uint64_t lock_acquires; /* scash_lock calls */
    uint64_t messages; /* protocol messages sent */
    uint64_t bytes; /* protocol bytes sent */
} scash_stats_t;

/* Collective over MPI_COMM_WORLD. scash_finalize must come before
 * MPI_Finalize (a program that forgets it is stopped with a message inside
 * MPI_Finalize). Environment: SCASH_MIGRATION=0 keeps homes
 * static; SCASH_HYSTERESIS=h moves a home after h intervals with the same
 * single writer (default 2); SCASH_FIRST_MOVE=0 makes the first move wait
 * for the hysteresis too; SCASH_FETCH_PAGES=k lets a read fault fetch up to
 * k pages (the faulting one and the invalid ones after it with the same
 * home; default 2); SCASH_STATS=1 prints the job's totals at
 * scash_finalize; SCASH_MAX_BYTES caps what one process may back. */
int scash_init(void);
int scash_finalize(void);
int scash_initialized(void);
int scash_rank(void);
int scash_nprocs(void);

/* Collective: allocates size bytes (rounded up to pages), zero-filled, with
 * the initial home distribution dist; *ptr receives the address (the same in
 * every process). */
int scash_alloc(size_t size, int dist, void** ptr);
/* Collective: releases a region from scash_alloc. */
int scash_free(void* ptr);

/* Collective: all writes before it are visible to every process after it. */
int scash_barrier(void);
/* Locks are numbered 0, 1, 2, ...; any int >= 0 names a lock. */
int scash_lock(int lock_id);
int scash_unlock(int lock_id);
/* Sends this process's pending writes to their homes now (a release without
 * synchronization). */
int scash_flush(void);

/* Home migration at barriers: on (1, the default) or off (0, static homes).
 * A page still at its initial home moves to its single writer at the first
 * barrier; later moves wait until the same process has been the only
 * writer for `hysteresis` intervals. Collective; the same value in every
 * process. */
int scash_set_migration(int on, int hysteresis);

/* Collective, with the same arguments in every process: the pages holding
 * [addr, addr + size) (inside one region) get process proc as their home,
 * for example each block's owner ("homes placed by hand"). It acts as a
 * barrier. With migration on, such a page moves again only after the
 * hysteresis. */
int scash_set_home(void* addr, size_t size, int proc);

int scash_stats_local(scash_stats_t* out);
/* Collective: the sum over all processes. */
int scash_stats_total(scash_stats_t* out);
/* Collective: process 0 prints the totals to stderr, prefixed with label. */
int scash_stats_print(const char* label);

/* Home process of the page holding addr (for tests and tools). */
int scash_home_of(const void* addr);

#ifdef __cplusplus
}
#endif
#endif
