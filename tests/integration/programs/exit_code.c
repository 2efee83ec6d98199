/* SPDX-License-Identifier: BSD-3-Clause */
/* After a clean MPI_Finalize, rank argv[1] exits with status argv[2];
 * with argv[3] = "nofinalize" it returns without calling MPI_Finalize. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int who = argc > 1 ? atoi(argv[1]) : 1;
    int code = argc > 2 ? atoi(argv[2]) : 5;
    int skip_finalize = argc > 3 && strcmp(argv[3], "nofinalize") == 0;
    if (skip_finalize && rank == who) {
        return code;
    }
    if (skip_finalize) {
        /* The others stay in MPI so mpiexec has someone to kill. */
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return rank == who ? code : 0;
}
