/* SPDX-License-Identifier: BSD-3-Clause */
/* One rank (argv[1], default 1) dies of a real segmentation fault after
 * MPI_Init while the others wait in a barrier that can never complete:
 * mpiexec must kill them and name the rank and the signal. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int victim = argc > 1 ? atoi(argv[1]) : 1;
    if (rank == victim) {
        volatile int *p = NULL;
        *p = 42;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    printf("segv: rank %d passed the barrier, which should be impossible\n", rank);
    MPI_Finalize();
    return 0;
}
