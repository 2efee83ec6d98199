/* SPDX-License-Identifier: BSD-3-Clause */
/* Developer check of one allreduce algorithm of libhashi-coll against
 * MPICH's own: run it with the algorithm forced, e.g.
 *   HASHI_COLL_ALLREDUCE=lr_lr mpiexec ... ./allreduce_dev [extra counts]
 * MPI_Allreduce goes through the interposer, PMPI_Allreduce straight to
 * MPICH. Integers must match bit for bit, doubles within rounding, and
 * every rank must get the same bits. Prints one line per failed case and a
 * summary on rank 0; exits 1 on any failure. */
#include <mpi.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { K_DSUM, K_ISUM, K_IMAX, K_BXOR, K_MINLOC, K_MAXLOC, K_USER, K_DERIVED, K_KINDS };
static const char* kind_name[K_KINDS] = {
    "double sum", "int sum", "int max", "int bxor", "2int minloc", "double_int maxloc", "user op", "derived"};

/* A commutative op of our own, a + b + 1: any order and grouping of P
 * operands gives their sum plus P - 1, so the result is exact. */
static void plus_one(void* in, void* inout, int* len, MPI_Datatype* type)
{
    (void)type;
    const int* a = in;
    int* b = inout;
    for (int i = 0; i < *len; ++i)
        b[i] += a[i] + 1;
}

/* For the derived type below: 2 ints 3 apart in a 16-byte element with a
 * lower bound of -4; sum on the first, xor on the second. */
static void on_pairs(void* in, void* inout, int* len, MPI_Datatype* type)
{
    (void)type;
    const int* a = in;
    int* b = inout;
    for (int i = 0; i < *len; ++i) {
        b[4 * i] += a[4 * i];
        b[4 * i + 3] ^= a[4 * i + 3];
    }
}

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int counts[32] = {0, 1, 2, 3, 7, 13, 31, 97, 1009, 65537};
    int ncounts = 10;
    for (int i = 1; i < argc && ncounts < 32; ++i) {
        char* end;
        const long c = strtol(argv[i], &end, 10);
        if (*end || c < 0 || c > (1 << 26)) {
            if (rank == 0)
                fprintf(stderr, "allreduce_dev: '%s' is not a count from 0 to 2^26\n", argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        counts[ncounts++] = (int)c;
    }

    MPI_Op user_op, pair_op;
    MPI_Op_create(plus_one, 1, &user_op);
    MPI_Op_create(on_pairs, 1, &pair_op);
    MPI_Datatype vec, derived;
    MPI_Type_vector(2, 1, 3, MPI_INT, &vec);
    MPI_Type_create_resized(vec, -4, 16, &derived);
    MPI_Type_commit(&derived);

    /* Per kind: the type, the op, and how many ints one element spans. */
    const struct {
        MPI_Datatype type;
        MPI_Op op;
        size_t ints;
    } kinds[K_KINDS] = {{MPI_DOUBLE, MPI_SUM, 2}, {MPI_INT, MPI_SUM, 1}, {MPI_INT, MPI_MAX, 1}, {MPI_INT, MPI_BXOR, 1},
        {MPI_2INT, MPI_MINLOC, 2}, {MPI_DOUBLE_INT, MPI_MAXLOC, 4}, {MPI_INT, user_op, 1}, {derived, pair_op, 4}};

    /* MPI_COMM_WORLD, then two sub-communicators that cut the clusters
     * unevenly (every third rank against the others). */
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 3 == 2, rank, &sub);
    int checks = 0, failures = 0;
    for (int ck = 0; ck < 2; ++ck) {
        MPI_Comm comm = ck == 0 ? MPI_COMM_WORLD : sub;
        int crank, csize;
        MPI_Comm_rank(comm, &crank);
        MPI_Comm_size(comm, &csize);
        for (int ci = 0; ci < ncounts; ++ci) {
            const int count = counts[ci];
            for (int kind = 0; kind < K_KINDS; ++kind) {
                for (int in_place = 0; in_place < 2; ++in_place) {
                    const MPI_Datatype type = kinds[kind].type;
                    const MPI_Op op = kinds[kind].op;
                    const size_t ints = kinds[kind].ints;
                    /* Two ints of slack before the data (the derived type's lower
                     * bound is -4; doubles stay aligned); holes keep a marker. */
                    const size_t n = (size_t)count * ints + 2;
                    int* in = malloc(n * sizeof(int));
                    int* out = malloc(n * sizeof(int));
                    int* ref = malloc(n * sizeof(int));
                    for (size_t i = 0; i < n; ++i) {
                        in[i] = (int)((crank * 7919u + i * 104729u) % 2001u) - 1000;
                        out[i] = ref[i] = -7;
                    }
                    if (kind == K_DSUM)
                        for (int i = 0; i < count; ++i)
                            ((double*)(in + 2))[i] = 1.0 / (1 + crank + i % 17) + (i % 5) * 1e6;
                    if (kind == K_MINLOC) /* ties in the value, so the index decides */
                        for (int i = 0; i < count; ++i)
                            in[2 + 2 * i] = (i + crank) % 3, in[3 + 2 * i] = crank;
                    if (kind == K_MAXLOC) /* {double, int} and 4 bytes of padding */
                        for (int i = 0; i < count; ++i) {
                            const double v = (i * 7 + crank) % 5;
                            memcpy(in + 2 + 4 * i, &v, sizeof v);
                            in[4 + 4 * i] = crank;
                        }
                    void* send = in + 2;
                    void* recv = out + 2;
                    PMPI_Allreduce(send, ref + 2, count, type, op, comm);
                    if (in_place) {
                        memcpy(out, in, n * sizeof(int));
                        send = MPI_IN_PLACE;
                    }
                    const int rc = MPI_Allreduce(send, recv, count, type, op, comm);

                    int ok = rc == MPI_SUCCESS;
                    if (kind == K_DSUM) {
                        const double* o = (double*)(out + 2);
                        const double* r = (double*)(ref + 2);
                        for (int i = 0; i < count; ++i)
                            if (fabs(o[i] - r[i]) > 1e-13 * csize * fabs(r[i]))
                                ok = 0;
                    } else if (kind == K_DERIVED) {
                        for (int e = 0; e < count; ++e) {
                            const int* o = out + 2 + 4 * e;
                            const int* r = ref + 2 + 4 * e;
                            if (o[0] != r[0] || o[3] != r[3] || (!in_place && (o[1] != -7 || o[2] != -7)))
                                ok = 0;
                        }
                        if (!in_place && (out[0] != -7 || out[1] != -7))
                            ok = 0;
                    } else if (kind == K_MAXLOC) {
                        for (int e = 0; e < count; ++e)
                            if (memcmp(out + 2 + 4 * e, ref + 2 + 4 * e, 3 * sizeof(int)) != 0)
                                ok = 0;
                    } else {
                        ok = ok && memcmp(out + 2, ref + 2, (size_t)count * ints * sizeof(int)) == 0;
                    }
                    /* Every rank must hold rank 0's bits (in the data, not in the
                     * holes, which an in-place call leaves as each rank had them). */
                    size_t words = 0;
                    for (size_t i = 0; i < (size_t)count * ints; ++i)
                        if ((kind != K_DERIVED || i % 4 == 0 || i % 4 == 3) && (kind != K_MAXLOC || i % 4 != 3))
                            in[words++] = out[2 + i];
                    memcpy(ref, in, words * sizeof(int));
                    PMPI_Bcast(ref, (int)words, MPI_INT, 0, comm);
                    if (memcmp(ref, in, words * sizeof(int)) != 0)
                        ok = 0;
                    int all_ok;
                    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, comm);
                    ++checks;
                    if (!all_ok && crank == 0) {
                        ++failures;
                        printf("allreduce_dev: FAIL %s of %d ranks: count %d %s%s\n", ck ? "sub-comm" : "world", csize,
                            count, kind_name[kind], in_place ? " in place" : "");
                    }
                    free(in);
                    free(out);
                    free(ref);
                }
            }
        }
    }
    int total = 0;
    PMPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("allreduce_dev: %d ranks, %d checks, %d failed\n", size, checks, total);
    MPI_Op_free(&user_op);
    MPI_Op_free(&pair_op);
    MPI_Type_free(&derived);
    MPI_Type_free(&vec);
    MPI_Comm_free(&sub);
    MPI_Finalize();
    return total != 0;
}
