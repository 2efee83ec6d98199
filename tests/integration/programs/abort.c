/* SPDX-License-Identifier: BSD-3-Clause */
/* Rank 0 calls MPI_Abort with the code in argv[1] (default 3) while the
 * others wait in a barrier: mpiexec must exit with that code. */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        MPI_Abort(MPI_COMM_WORLD, argc > 1 ? atoi(argv[1]) : 3);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
