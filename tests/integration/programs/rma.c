/* SPDX-License-Identifier: BSD-3-Clause */
/* rma.c - one-sided communication between nodes: put, get and accumulate
 * under fences, then passive-target lock/put/flush/get, small and large
 * (4 MiB, larger than the provider's chunk), each result checked.
 * Prints "rma: OK" on rank 0 when every rank verified its data. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SMALL 64
#define LARGE (1 << 20) /* ints: 4 MiB */

int main(int argc, char **argv)
{
    int rank, size, errors = 0, total = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;

    int *base;
    MPI_Win win;
    MPI_Win_allocate((MPI_Aint)(SMALL + LARGE) * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    for (int i = 0; i < SMALL + LARGE; i++)
        base[i] = -1;

    /* Active target: every rank puts into its right neighbour. */
    int src[SMALL];
    for (int i = 0; i < SMALL; i++)
        src[i] = rank * 1000 + i;
    MPI_Win_fence(0, win);
    MPI_Put(src, SMALL, MPI_INT, next, 0, SMALL, MPI_INT, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < SMALL; i++)
        if (base[i] != prev * 1000 + i)
            errors++;

    /* Get back what the left neighbour holds; accumulate into rank 0. */
    int got[SMALL];
    int one = 1;
    MPI_Win_fence(0, win);
    MPI_Get(got, SMALL, MPI_INT, prev, 0, SMALL, MPI_INT, win);
    MPI_Accumulate(&one, 1, MPI_INT, 0, SMALL - 1, 1, MPI_INT, MPI_SUM, win);
    MPI_Win_fence(0, win);
    int prevprev = (prev + size - 1) % size;
    for (int i = 0; i < SMALL - 1; i++)
        if (got[i] != prevprev * 1000 + i)
            errors++;
    if (rank == 0 && base[SMALL - 1] != (size - 1) * 1000 + SMALL - 1 + size)
        errors++;

    /* Passive target, large: 4 MiB into the right neighbour, then read it
     * back with a get after a flush. */
    int *big = malloc(sizeof(int) * LARGE);
    int *back = malloc(sizeof(int) * LARGE);
    for (int i = 0; i < LARGE; i++)
        big[i] = rank ^ (i * 7);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win);
    MPI_Put(big, LARGE, MPI_INT, next, SMALL, LARGE, MPI_INT, win);
    MPI_Win_flush(next, win);
    MPI_Get(back, LARGE, MPI_INT, next, SMALL, LARGE, MPI_INT, win);
    MPI_Win_unlock(next, win);
    if (memcmp(big, back, sizeof(int) * LARGE) != 0)
        errors++;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < LARGE; i++)
        if (base[SMALL + i] != (prev ^ (i * 7))) {
            errors++;
            break;
        }

    MPI_Win_free(&win);
    free(big);
    free(back);
    MPI_Reduce(&errors, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf(total == 0 ? "rma: OK on %d ranks\n" : "rma: %d errors on %d ranks\n", total ? total : size, size);
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
