/* SPDX-License-Identifier: BSD-3-Clause */
/* Use before initialization and initialization without
 * MPI_THREAD_MULTIPLE: error codes and messages, no crash, no hang. */
#include "scash.h"

#include <mpi.h>

#include <stdio.h>

int main(int argc, char** argv)
{
    int provided, ok = 1;
    void* p = &ok;
    ok &= scash_init() == SCASH_ERR_MPI; /* before MPI_Init */
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    ok &= scash_alloc(4096, SCASH_BLOCK, &p) == SCASH_ERR_NOT_INITIALIZED && p == NULL;
    ok &= scash_barrier() == SCASH_ERR_NOT_INITIALIZED;
    ok &= scash_lock(0) == SCASH_ERR_NOT_INITIALIZED;
    ok &= scash_finalize() == SCASH_ERR_NOT_INITIALIZED;
    if (provided != MPI_THREAD_MULTIPLE)
        ok &= scash_init() == SCASH_ERR_MPI;
    ok &= !scash_initialized();
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        printf("usage_errors: %s\n", all ? "ok" : "FAILED");
    MPI_Finalize();
    return all ? 0 : 1;
}
