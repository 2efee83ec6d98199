/* SPDX-License-Identifier: BSD-3-Clause */
/* A program that calls MPI_Finalize without scash_finalize: SCASH notices
 * inside MPI_Finalize (MPI_COMM_SELF attribute) and ends the job with a
 * message, instead of an obscure failure or a hang. */
#include "scash.h"

#include <mpi.h>

#include <stdio.h>

int main(int argc, char** argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (scash_init() != SCASH_OK)
        return 1;
    int* a;
    if (scash_alloc(4 * 4096, SCASH_CYCLIC, (void**)&a) != SCASH_OK)
        return 1;
    a[scash_rank() * 1024] = scash_rank() + 1;
    scash_barrier();
    int sum = 0;
    for (int p = 0; p < scash_nprocs(); ++p)
        sum += a[p * 1024];
    if (scash_rank() == 0)
        printf("no_scash_finalize: sum %d\n", sum);
    fflush(stdout); /* the job ends in MPI_Finalize */
    MPI_Finalize();
    printf(
        "no_scash_finalize: process %s after MPI_Finalize\n", scash_initialized() ? "still initialized" : "finalized");
    return 0;
}
