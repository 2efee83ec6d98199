/* SPDX-License-Identifier: BSD-3-Clause */
/* A lock-protected shared counter: every process adds 1, `iters` times,
 * under lock 0; after the barrier the counter must be nprocs * iters. A
 * second counter on another page is updated under lock 1 in the same loop,
 * so two locks carry write notices at once.
 *
 *   mpiexec -n 4 ./counter [iters]
 */
#include "scash.h"

#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (scash_init() != SCASH_OK)
        MPI_Abort(MPI_COMM_WORLD, 1);
    const long iters = argc > 1 ? atol(argv[1]) : 200;
    int me = scash_rank(), np = scash_nprocs();
    long* c;
    /* Two pages: counter 0 on the first, counter 1 on the second. */
    if (scash_alloc(8192, SCASH_CYCLIC, (void**)&c) != SCASH_OK)
        MPI_Abort(MPI_COMM_WORLD, 1);
    long* c0 = c;
    long* c1 = c + 4096 / sizeof(long);
    scash_barrier();
    for (long i = 0; i < iters; ++i) {
        scash_lock(0);
        *c0 += 1;
        scash_unlock(0);
        if (i % 4 == me % 4) {
            scash_lock(1);
            *c1 += 2;
            scash_unlock(1);
        }
    }
    scash_barrier();
    long expect1 = 0;
    for (int p = 0; p < np; ++p)
        for (long i = 0; i < iters; ++i)
            expect1 += (i % 4 == p % 4) ? 2 : 0;
    int ok = *c0 == np * iters && *c1 == expect1;
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (me == 0)
        printf("counter: %ld (expected %ld), second %ld (expected %ld): %s\n", *c0, np * iters, *c1, expect1,
            all_ok ? "ok" : "WRONG");
    scash_finalize();
    MPI_Finalize();
    return all_ok ? 0 : 1;
}
