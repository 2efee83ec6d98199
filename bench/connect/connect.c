/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * connect.c - hashi-connect: what a new connection between two ranks costs.
 *
 *   mpiexec -n N ./hashi-connect [ROUNDS]
 *
 * Rank 0 ping-pongs once with every other rank in turn; each is the first
 * message between the two, so it pays for the connection (TCP connect, the
 * provider's handshake) on top of the round trip. Then it ping-pongs with
 * each again, ROUNDS times (default 20), on the connection now open. The
 * difference of the two is the set-up cost of one connection; with N ranks
 * there are N-1 samples. Output (rank 0):
 *   connect SAMPLES FIRST_US WARM_US SETUP_US   (medians over the samples)
 * The two sides of every pair should be on different nodes, or MPICH uses
 * shared memory (MPIR_CVAR_NOLOCAL=1 forces the network on one host).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int by_value(const void* a, const void* b)
{
    const double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

static double median(double* v, int n)
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char** argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int rounds = argc > 1 ? atoi(argv[1]) : 20;
    if (size < 2 || rounds < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n N (N >= 2) hashi-connect [ROUNDS >= 1]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char byte = 0;
    double* first = calloc((size_t)size, sizeof(double));
    double* warm = calloc((size_t)size, sizeof(double));
    double* per_round = calloc((size_t)rounds, sizeof(double));
    /* Nothing crosses the network before the measured messages: MPI_Init
     * with our mpiexec makes no connection, and there is no barrier here. */
    for (int peer = 1; peer < size; ++peer) {
        if (rank == 0) {
            const double t = MPI_Wtime();
            MPI_Send(&byte, 1, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(&byte, 1, MPI_CHAR, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            first[peer - 1] = (MPI_Wtime() - t) * 1e6;
            for (int r = 0; r < rounds; ++r) {
                const double u = MPI_Wtime();
                MPI_Send(&byte, 1, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(&byte, 1, MPI_CHAR, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                per_round[r] = (MPI_Wtime() - u) * 1e6;
            }
            warm[peer - 1] = median(per_round, rounds);
        } else if (rank == peer) {
            for (int r = 0; r <= rounds; ++r) {
                MPI_Recv(&byte, 1, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(&byte, 1, MPI_CHAR, 0, 2, MPI_COMM_WORLD);
            }
        }
    }
    if (rank == 0) {
        const int n = size - 1;
        double* setup = calloc((size_t)n, sizeof(double));
        for (int i = 0; i < n; ++i)
            setup[i] = first[i] - warm[i];
        const double f = median(first, n), w = median(warm, n), s = median(setup, n);
        printf("connect %d %.1f %.1f %.1f\n", n, f, w, s);
        free(setup);
    }
    free(first);
    free(warm);
    free(per_round);
    MPI_Finalize();
    return 0;
}
