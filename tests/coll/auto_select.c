/* SPDX-License-Identifier: BSD-3-Clause */
/* A plain program, nothing forced: interposer.sh runs it across two fake
 * clusters with WAN-like link parameters and checks with
 * HASHI_COLL_VERBOSE=1 that a large allreduce gets a Hashi algorithm and a
 * non-commutative one goes to MPICH. Both results are checked here. */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>

/* a op b = a: non-commutative, so the result is rank 0's values. */
static void first(void* in, void* inout, int* len, MPI_Datatype* type)
{
    (void)type;
    for (int i = 0; i < *len; ++i)
        ((int*)inout)[i] = ((int*)in)[i];
}

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const int n = 1 << 20; /* 8 MiB of doubles */
    double* a = malloc(sizeof(double) * n);
    double* b = malloc(sizeof(double) * n);
    long wrong = 0;
    for (int i = 0; i < n; ++i)
        a[i] = me + (i % 1000); /* small integers: exact in any order */
    MPI_Allreduce(a, b, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < n; ++i)
        wrong += b[i] != (double)np * (np - 1) / 2 + (double)np * (i % 1000);

    MPI_Op op;
    MPI_Op_create(first, 0, &op);
    int x[64], y[64];
    for (int i = 0; i < 64; ++i)
        x[i] = 1000 * me + i;
    MPI_Allreduce(x, y, 64, MPI_INT, op, MPI_COMM_WORLD);
    for (int i = 0; i < 64; ++i)
        wrong += y[i] != i;
    MPI_Op_free(&op);

    long total = 0;
    MPI_Reduce(&wrong, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf("auto_select: %d ranks, %ld wrong values: %s\n", np, total, total ? "FAIL" : "OK");
    free(a);
    free(b);
    MPI_Finalize();
    return total != 0;
}
