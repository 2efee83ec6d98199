/* SPDX-License-Identifier: BSD-3-Clause */
/* nonblocking: the life cycle of libhashi-coll's nonblocking collectives,
 * which collcheck (one call at a time) does not cover. interposer.sh runs
 * it across fake clusters with the Hashi algorithms forced.
 *  - several in flight on one communicator at once, blocking collectives
 *    called in between, completed out of order by MPI_Waitsome/Waitany;
 *  - the communicator freed while one is in flight (MPI allows it: the
 *    operation completes, and our private communicators must outlive it);
 *  - a communicator that never had a blocking collective (they go to
 *    MPICH there, and must still be right).
 * Every result is an integer sum or a broadcast pattern known in closed
 * form. Prints "nonblocking: P ranks, 0 wrong values: OK" on rank 0. */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>

enum { N = 30011, INFLIGHT = 7 };

static int wrong;
static int me, np;

static void expect(const char* what, int i, long got, long want)
{
    if (got != want && ++wrong <= 5)
        printf("nonblocking: rank %d: %s wrong at %d: %ld, want %ld\n", me, what, i, got, want);
}

/* sum over ranks r of (r + k * i) */
static long sum_of(int k, int i, int ranks)
{
    return (long)ranks * (ranks - 1) / 2 + (long)ranks * k * i;
}

static void many_in_flight(MPI_Comm comm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    static long in[3][N], out[3][N], bc[2][N], red[N];
    MPI_Request req[INFLIGHT];
    for (int k = 0; k < 3; ++k)
        for (int i = 0; i < N; ++i)
            in[k][i] = rank + (long)(k + 1) * i;
    for (int b = 0; b < 2; ++b)
        for (int i = 0; i < N; ++i)
            bc[b][i] = rank == b % size ? 3L * i + b : -1;
    MPI_Iallreduce(in[0], out[0], N, MPI_LONG, MPI_SUM, comm, &req[0]);
    MPI_Ibcast(bc[0], N, MPI_LONG, 0, comm, &req[1]);
    MPI_Iallreduce(in[1], out[1], N, MPI_LONG, MPI_SUM, comm, &req[2]);
    /* Blocking collectives while those are in flight. */
    long one = 1, total = 0;
    MPI_Allreduce(&one, &total, 1, MPI_LONG, MPI_SUM, comm);
    expect("blocking allreduce between", 0, total, size);
    MPI_Ibarrier(comm, &req[3]);
    MPI_Ibcast(bc[1], N, MPI_LONG, 1 % size, comm, &req[4]);
    MPI_Ireduce(in[2], red, N, MPI_LONG, MPI_SUM, size - 1, comm, &req[5]);
    MPI_Iallreduce(MPI_IN_PLACE, in[2], N, MPI_LONG, MPI_MAX, comm, &req[6]);
    MPI_Barrier(comm);
    /* Complete them in whatever order they finish. */
    int left = INFLIGHT;
    while (left > 0) {
        int done = 0, idx[INFLIGHT];
        MPI_Status st[INFLIGHT];
        MPI_Waitsome(INFLIGHT, req, &done, idx, st);
        left -= done;
        if (left > 0) {
            int any;
            MPI_Waitany(INFLIGHT, req, &any, MPI_STATUS_IGNORE);
            if (any != MPI_UNDEFINED)
                --left;
        }
    }
    for (int i = 0; i < N; ++i) {
        expect("iallreduce 1", i, out[0][i], sum_of(1, i, size));
        expect("iallreduce 2", i, out[1][i], sum_of(2, i, size));
        expect("ibcast 1", i, bc[0][i], 3L * i);
        expect("ibcast 2", i, bc[1][i], 3L * i + 1);
        expect("iallreduce in place max", i, in[2][i], size - 1 + 3L * i);
        if (rank == size - 1)
            expect("ireduce", i, red[i], sum_of(3, i, size));
    }
}

static void freed_while_in_flight(void)
{
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Barrier(dup); /* gives it a hierarchy, so ours run on it */
    static long in[N], out[N];
    for (int i = 0; i < N; ++i)
        in[i] = me + (long)5 * i;
    MPI_Request req;
    MPI_Iallreduce(in, out, N, MPI_LONG, MPI_SUM, dup, &req);
    MPI_Comm_free(&dup);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (int i = 0; i < N; ++i)
        expect("iallreduce on a freed communicator", i, out[i], sum_of(5, i, np));
}

static void fresh_communicator(void)
{
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
    int size;
    MPI_Comm_size(half, &size);
    long in = 7, out = 0;
    MPI_Request req;
    MPI_Iallreduce(&in, &out, 1, MPI_LONG, MPI_SUM, half, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    expect("iallreduce on a fresh communicator", 0, out, 7L * size);
    MPI_Comm_free(&half);
}

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    for (int round = 0; round < 3; ++round)
        many_in_flight(MPI_COMM_WORLD);
    freed_while_in_flight();
    fresh_communicator();
    int total = 0;
    MPI_Allreduce(&wrong, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("nonblocking: %d ranks, %d wrong values: %s\n", np, total, total ? "FAIL" : "OK");
    MPI_Finalize();
    return total != 0;
}
