/* SPDX-License-Identifier: BSD-3-Clause */
/* Zero twins: a page whose copy is still the region's zeros needs no twin
 * copy on its first write. A home's copy stops being zeros when it applies
 * others' diffs, so when that process writes the page after losing its home
 * (scash_set_home leaves it a valid copy), its twin must be that copy, not
 * zeros; else its diff would carry the others' old bytes and overwrite
 * newer ones at the new home.
 *
 * On 4 processes, one page with block home 0:
 *   1. processes 1 and 2 write bytes 1 and 2 (two writers: no move);
 *      barrier (process 0 applies both diffs);
 *   2. the page's home becomes process 3; process 0 keeps a valid copy;
 *   3. process 1 writes byte 1 again and flushes (its diff reaches process
 *      3), then process 0 writes byte 0; barrier;
 *   4. everybody reads bytes 0, 1 and 2. */
#include "scash.h"

#include <mpi.h>

#include <stdio.h>

int main(int argc, char** argv)
{
    int provided, errors = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (scash_init() != SCASH_OK)
        return 1;
    const int me = scash_rank(), np = scash_nprocs();
    unsigned char* b;
    if (np != 4 || scash_alloc(4096, SCASH_BLOCK, (void**)&b) != SCASH_OK) {
        if (me == 0)
            fprintf(stderr, "pristine: needs 4 processes\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    if (me == 1 || me == 2)
        b[me] = (unsigned char)(0x10 + me);
    scash_barrier();
    if (scash_set_home(b, 4096, 3) != SCASH_OK)
        MPI_Abort(MPI_COMM_WORLD, 1);

    if (me == 1) {
        b[1] = 0x21;
        scash_flush();
    }
    MPI_Barrier(MPI_COMM_WORLD); /* process 1's diff is at the home before process 0 writes */
    if (me == 0)
        b[0] = 0x30;
    scash_barrier();

    const unsigned char want[3] = {0x30, 0x21, 0x12};
    for (int i = 0; i < 3; ++i)
        if (b[i] != want[i] && errors++ < 5)
            fprintf(stderr, "process %d: byte %d = 0x%x, expected 0x%x\n", me, i, b[i], want[i]);
    int total = 0;
    MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("pristine: %s (%d wrong bytes)\n", total ? "FAILED" : "ok", total);
    scash_finalize();
    MPI_Finalize();
    return total != 0;
}
