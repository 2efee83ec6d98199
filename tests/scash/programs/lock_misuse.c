/* SPDX-License-Identifier: BSD-3-Clause */
/* Lock misuse gives an error code and a message, not a hang or a crash. */
#include "scash.h"

#include <mpi.h>

#include <stdio.h>

int main(int argc, char** argv)
{
    int provided, ok = 1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (scash_init() != SCASH_OK)
        return 1;
    if (scash_rank() == 0) {
        ok &= scash_unlock(3) == SCASH_ERR_STATE;
        ok &= scash_lock(1) == SCASH_OK;
        ok &= scash_lock(1) == SCASH_ERR_STATE;
        ok &= scash_barrier() == SCASH_ERR_STATE;
        ok &= scash_unlock(1) == SCASH_OK;
        ok &= scash_lock(-2) == SCASH_ERR_ARG;
    }
    scash_barrier();
    if (scash_rank() == 0)
        printf("lock_misuse: %s\n", ok ? "ok" : "FAILED");
    scash_finalize();
    MPI_Finalize();
    return ok ? 0 : 1;
}
