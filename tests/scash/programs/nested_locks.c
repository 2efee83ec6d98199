/* SPDX-License-Identifier: BSD-3-Clause */
/* Nested critical sections: lock 0 around lock 1. Counter x0 (its own page)
 * is incremented inside lock 0 *before* lock 1 is taken, so its write is
 * released at the inner acquire; the outer unlock must still announce it
 * to the next holder of lock 0. y (inside lock 1) and x1 (inside lock 0,
 * after the inner section, on a third page) complete the pattern. */
#include "scash.h"

#include <mpi.h>

#include <stdio.h>

#define PAGE_LONGS (4096 / sizeof(long))

int main(int argc, char** argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (scash_init() != SCASH_OK)
        return 1;
    const int me = scash_rank(), np = scash_nprocs();
    const long iters = 60;
    long* m;
    if (scash_alloc(3 * 4096, SCASH_CYCLIC, (void**)&m) != SCASH_OK)
        return 1;
    long *x0 = m, *y = m + PAGE_LONGS, *x1 = m + 2 * PAGE_LONGS;
    scash_barrier();
    for (long i = 0; i < iters; ++i) {
        scash_lock(0);
        *x0 += 1;
        scash_lock(1);
        *y += 1;
        scash_unlock(1);
        *x1 += 2;
        scash_unlock(0);
    }
    scash_barrier();
    const int ok = *x0 == np * iters && *y == np * iters && *x1 == 2 * np * iters;
    if (me == 0)
        printf("nested_locks: x0 %ld y %ld x1 %ld (expected %ld %ld %ld): %s\n", *x0, *y, *x1, np * iters, np * iters,
            2 * np * iters, ok ? "ok" : "WRONG");
    scash_finalize();
    MPI_Finalize();
    return ok ? 0 : 1;
}
