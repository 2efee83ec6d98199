/* SPDX-License-Identifier: BSD-3-Clause */
/* Every rank prints "ready" and then blocks in a receive nobody matches,
 * so tests can check that signals and timeouts end a stuck job. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, x;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("rank %d ready\n", rank);
    fflush(stdout);
    MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
