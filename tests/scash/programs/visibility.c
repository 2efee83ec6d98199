/* SPDX-License-Identifier: BSD-3-Clause */
/* Values written before a barrier are seen by every process after it, for
 * each home distribution, over several rounds in which the writer of each
 * element changes (so pages move between homes and copies go stale). */
#include "scash.h"

#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>

#define N 20000 /* ints: about 20 pages */

int main(int argc, char** argv)
{
    int provided, errors = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (scash_init() != SCASH_OK)
        return 1;
    int me = scash_rank(), np = scash_nprocs();
    const int dists[] = {SCASH_BLOCK, SCASH_CYCLIC, SCASH_FIRST_TOUCH};
    for (int d = 0; d < 3; ++d) {
        int* a;
        if (scash_alloc(N * sizeof(int), dists[d], (void**)&a) != SCASH_OK)
            return 1;
        for (int round = 0; round < 4; ++round) {
            /* Element i is written by process (i / 1000 + round) % np: whole pages per writer. */
            for (int i = 0; i < N; ++i)
                if ((i / 1000 + round) % np == me)
                    a[i] = i * 7 + round;
            scash_barrier();
            for (int i = 0; i < N; ++i)
                if (a[i] != i * 7 + round) {
                    if (errors++ < 5)
                        fprintf(stderr, "process %d: dist %d round %d: a[%d] = %d, expected %d\n", me, dists[d], round,
                            i, a[i], i * 7 + round);
                }
            scash_barrier();
        }
        scash_free(a);
    }
    int total = 0;
    MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("visibility: %s (%d wrong values)\n", total ? "FAILED" : "ok", total);
    scash_finalize();
    MPI_Finalize();
    return total != 0;
}
