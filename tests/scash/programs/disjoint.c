/* SPDX-License-Identifier: BSD-3-Clause */
/* Multiple writers of one page: every process writes its own bytes of the
 * same pages (interleaved byte by byte, so every run of a diff borders on
 * another process's bytes) and all writes must survive at the home. Then a
 * false-sharing stress loop: many rounds of neighbouring updates with a
 * barrier each, checked every round. */
#include "scash.h"

#include <mpi.h>

#include <stdio.h>

#define BYTES 8192
#define ROUNDS 40

int main(int argc, char** argv)
{
    int provided, errors = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (scash_init() != SCASH_OK)
        return 1;
    int me = scash_rank(), np = scash_nprocs();
    unsigned char* b;
    if (scash_alloc(BYTES, SCASH_BLOCK, (void**)&b) != SCASH_OK)
        return 1;

    /* Two processes, disjoint bytes of one page. */
    if (me < 2)
        for (int i = me; i < 4096; i += 2)
            b[i] = (unsigned char)(0x40 + me);
    scash_barrier();
    for (int i = 0; i < 4096; ++i)
        if (b[i] != (unsigned char)(0x40 + (np > 1 ? i % 2 : 0)) && errors++ < 5)
            fprintf(stderr, "process %d: two writers: byte %d = 0x%x\n", me, i, b[i]);
    scash_barrier();

    /* False sharing: byte i belongs to process i % np; each round every
     * process adds 1 to its bytes, reading the neighbours' bytes too. */
    for (int r = 0; r < ROUNDS; ++r) {
        for (int i = me; i < BYTES; i += np)
            b[i] = r == 0 ? 1 : (unsigned char)(b[i] + 1);
        scash_barrier();
        for (int i = 0; i < BYTES; ++i)
            if (b[i] != (unsigned char)(r + 1) && errors++ < 5)
                fprintf(stderr, "process %d: round %d: byte %d = %d, expected %d\n", me, r, i, b[i], r + 1);
        scash_barrier();
    }
    int total = 0;
    MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("disjoint: %s (%d wrong bytes)\n", total ? "FAILED" : "ok", total);
    scash_finalize();
    MPI_Finalize();
    return total != 0;
}
