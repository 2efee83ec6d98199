/* SPDX-License-Identifier: BSD-3-Clause */
/* Rank 0 reads integers from its stdin (which mpiexec forwards) until EOF
 * and broadcasts the sum; every rank prints it. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank;
    long sum = 0, v;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        while (scanf("%ld", &v) == 1) {
            sum += v;
        }
    }
    MPI_Bcast(&sum, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    printf("rank %d sum %ld\n", rank, sum);
    MPI_Finalize();
    return 0;
}
