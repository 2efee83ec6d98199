/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hello.c - the smallest useful MPI program, in C.
 *
 * Demonstrates MPI_Init/MPI_Finalize, rank and size of MPI_COMM_WORLD and
 * MPI_Get_processor_name.  Checks that every rank really took part: each
 * rank contributes 1 to a sum-reduction, and rank 0 aborts with error code
 * 1 unless the sum equals the number of ranks.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank = 0, size = 0, namelen = 0, one = 1, answered = 0;
    char host[MPI_MAX_PROCESSOR_NAME];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(host, &namelen);

    printf("Hello from rank %d of %d on %s (C)\n", rank, size, host);
    /* Flush before the collective so the greeting is not lost if rank 0
     * aborts below. */
    fflush(stdout);

    MPI_Reduce(&one, &answered, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (answered != size) {
            fprintf(stderr, "hello: expected %d ranks, but %d answered\n", size, answered);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        printf("hello: %d ranks answered\n", answered);
    }

    MPI_Finalize();
    return 0;
}
