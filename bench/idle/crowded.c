/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crowded.c - what a job with more ranks than cores does while its ranks
 * wait for each other: the cases where the provider's idle policy
 * (src/transport/engine/idle_wait.hpp) decides how soon a waiting rank
 * hands its core to a rank that has work.
 *
 *   allreduce   8-byte MPI_Allreduce, back to back: every rank waits on
 *               others at every step (microseconds per call)
 *   alltoall    MPI_Alltoall of 16 KiB blocks (milliseconds per call)
 *   imbalance   rank r computes (r + 1) units, then MPI_Barrier: the
 *               early ones wait for the late ones (seconds in all)
 *
 * Each phase checks its data (the allreduce's sum, every alltoall block's
 * source and destination) and exits 1 on a wrong one, so that a smoke run
 * is also a correctness check.  Rank 0 prints one line per phase:
 *   <phase> <iterations> <value> <unit>
 * usage: hashi-crowded [--quick]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(const char* what, int rank)
{
    fprintf(stderr, "hashi-crowded: rank %d: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* A unit of computation: a few hundred microseconds on one core, the
 * compiler kept from removing it. */
static double compute(long units)
{
    volatile double s = 0;
    for (long j = 0; j < units * 100000L; j++)
        s += (double)j * 0.5;
    return s;
}

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    if (argc > 1 && !quick) {
        if (rank == 0)
            fprintf(stderr, "usage: hashi-crowded [--quick]\n");
        MPI_Finalize();
        return 2;
    }
    const int reduce_iters = quick ? 200 : 2000;
    const int a2a_iters = quick ? 10 : 100;
    const int barrier_iters = quick ? 5 : 30;
    const int block = 4096; /* ints: 16 KiB */

    /* allreduce */
    double mine = rank, sum = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < reduce_iters; i++) {
        MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (sum != (double)size * (size - 1) / 2)
            fail("allreduce gave a wrong sum", rank);
    }
    double t1 = MPI_Wtime();

    /* alltoall: block d of rank s holds s * size + d in every element */
    int* out = malloc(sizeof(int) * (size_t)block * (size_t)size);
    int* in = malloc(sizeof(int) * (size_t)block * (size_t)size);
    if (!out || !in)
        fail("out of memory", rank);
    for (int d = 0; d < size; d++)
        for (int j = 0; j < block; j++)
            out[(size_t)d * block + j] = rank * size + d;
    MPI_Barrier(MPI_COMM_WORLD);
    double t2 = MPI_Wtime();
    for (int i = 0; i < a2a_iters; i++) {
        memset(in, 0xff, sizeof(int) * (size_t)block * (size_t)size);
        MPI_Alltoall(out, block, MPI_INT, in, block, MPI_INT, MPI_COMM_WORLD);
        for (int s = 0; s < size; s++)
            if (in[(size_t)s * block] != s * size + rank || in[(size_t)s * block + block - 1] != s * size + rank)
                fail("alltoall delivered a wrong block", rank);
    }
    double t3 = MPI_Wtime();

    /* imbalance */
    MPI_Barrier(MPI_COMM_WORLD);
    double t4 = MPI_Wtime();
    for (int i = 0; i < barrier_iters; i++) {
        compute(rank + 1);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    double t5 = MPI_Wtime();

    double local[3] = { t1 - t0, t3 - t2, t5 - t4 }, worst[3];
    MPI_Reduce(local, worst, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("# ranks %d\n", size);
        printf("allreduce %d %.3f us\n", reduce_iters, worst[0] / reduce_iters * 1e6);
        printf("alltoall %d %.4f ms\n", a2a_iters, worst[1] / a2a_iters * 1e3);
        printf("imbalance %d %.4f s\n", barrier_iters, worst[2]);
        fflush(stdout);
    }
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}
