/* SPDX-License-Identifier: BSD-3-Clause */
/* Traffic, then a pause a test controls: every rank sends 100 messages of
 * 64 KiB to the next and receives as many from the previous, then the job
 * stays inside MPI (so the provider keeps making progress and rewriting
 * its statistics files) until the file named by argv[1] exists; at most
 * 120 s, then it fails rather than hang. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { count = 100, bytes = 64 * 1024 };

int main(int argc, char **argv)
{
    int rank, size, flag = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2) {
        fprintf(stderr, "usage: stats_hold RELEASE-FILE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char *out = calloc(bytes, 1), *in = calloc(bytes, 1);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int i = 0; i < count; ++i) {
        MPI_Sendrecv(out, bytes, MPI_CHAR, next, i, in, bytes, MPI_CHAR, prev, i, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
    }
    /* Everyone polls: an MPI call every 10 ms, until rank 0 sees the file. */
    int released = 0;
    for (int waited = 0; !released && waited < 12000; ++waited) {
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        int here = rank == 0 && access(argv[1], F_OK) == 0;
        MPI_Allreduce(&here, &released, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (!released) {
            usleep(10000);
        }
    }
    if (rank == 0) {
        printf("stats_hold: %d ranks %s\n", size, released ? "released" : "never released");
    }
    free(out);
    free(in);
    MPI_Finalize();
    return released ? 0 : 1;
}
