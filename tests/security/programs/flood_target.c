/* SPDX-License-Identifier: BSD-3-Clause */
/* The job tests/security/fd-flood.sh floods: once rank 0 has printed
 * "ready" it waits (in MPI progress) until the file argv[1] exists, then
 * every rank exchanges with every other (MPI_Alltoall makes the connections
 * not made yet, while the flood is on) and checks the result, repeatedly;
 * rank 0 prints the time of that part. */
#include "attack_window.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char** argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: flood_target FLAG-FILE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    attack_window(rank, argv[1]);
    const double start = MPI_Wtime();
    int* out = malloc(sizeof(int) * size);
    int* in = malloc(sizeof(int) * size);
    int bad = 0;
    for (int round = 0; round < 200; ++round) {
        for (int i = 0; i < size; ++i)
            out[i] = round * 1000000 + rank * 1000 + i;
        MPI_Alltoall(out, 1, MPI_INT, in, 1, MPI_INT, MPI_COMM_WORLD);
        for (int i = 0; i < size; ++i)
            bad += in[i] != round * 1000000 + i * 1000 + rank;
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("exchanges %s in %.3f s\n", bad == 0 ? "correct" : "WRONG", MPI_Wtime() - start);
    free(out);
    free(in);
    MPI_Finalize();
    return bad != 0;
}
