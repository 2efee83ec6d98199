/* SPDX-License-Identifier: BSD-3-Clause */
/* Process 3 leaves early while the others wait for it in a barrier (mode
 * "exit": returns from main without scash_finalize; mode "crash": dies of
 * SIGKILL). The job must end with an error that names the cause, not hang. */
#include "scash.h"

#include <mpi.h>
#include <signal.h>

#include <stdio.h>
#include <string.h>

int main(int argc, char** argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (scash_init() != SCASH_OK)
        return 1;
    int* a;
    if (scash_alloc(4 * 4096, SCASH_BLOCK, (void**)&a) != SCASH_OK)
        return 1;
    a[scash_rank() * 1024] = 1;
    scash_barrier();
    if (scash_rank() == 3) {
        if (argc > 1 && !strcmp(argv[1], "crash"))
            raise(SIGKILL);
        return 0;
    }
    scash_barrier();
    printf("early_exit: process %d passed the barrier (wrong)\n", scash_rank());
    scash_finalize();
    MPI_Finalize();
    return 0;
}
