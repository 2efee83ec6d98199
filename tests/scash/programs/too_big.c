/* SPDX-License-Identifier: BSD-3-Clause */
/* An allocation larger than the job can back fails on every process with
 * SCASH_ERR_NOMEM and a message; mismatched sizes fail with SCASH_ERR_ARG;
 * the job stays usable afterwards. */
#include "scash.h"

#include <mpi.h>

#include <stdio.h>

int main(int argc, char** argv)
{
    int provided, ok = 1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (scash_init() != SCASH_OK)
        return 1;
    void* p = &ok;
    ok &= scash_alloc((size_t)1 << 50, SCASH_BLOCK, &p) == SCASH_ERR_NOMEM && p == NULL;
    ok &= scash_alloc(4096 * (size_t)(1 + scash_rank()), SCASH_BLOCK, &p) == SCASH_ERR_ARG && p == NULL;
    ok &= scash_alloc(4096, 7, &p) == SCASH_ERR_ARG;
    int* q = NULL;
    ok &= scash_alloc(4096, SCASH_CYCLIC, (void**)&q) == SCASH_OK && q != NULL;
    if (q) {
        if (scash_rank() == 1)
            q[5] = 42;
        scash_barrier();
        ok &= q[5] == 42;
    }
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (scash_rank() == 0)
        printf("too_big: %s\n", all ? "ok" : "FAILED");
    scash_finalize();
    MPI_Finalize();
    return all ? 0 : 1;
}
