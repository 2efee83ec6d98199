/* SPDX-License-Identifier: BSD-3-Clause */
/* Developer check of libhashi-coll's reduce, reduce_scatter_block, alltoall
 * and alltoallv: each call through MPI_* (ours, forced with HASHI_COLL_*)
 * is compared byte for byte, holes of derived types included, with the
 * same call through PMPI_* (MPICH's own; for reduce, a gather and local
 * reductions through PMPI, because MPICH 4.0.2's own MPI_Reduce drops the
 * root's contribution above 2 KiB on a communicator whose ranks are not in
 * node order: see mpich_reduce_order.c), on MPI_COMM_WORLD and on a
 * sub-communicator that drops a rank and reverses the order (so clusters
 * are uneven and their ranks not contiguous). Data are small integers, so
 * sums are exact in floating point too and any order gives the same bits.
 *
 *   reduce_a2a [max_count]     prints "reduce_a2a: N checks, 0 failed: OK"
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures, checks, world_rank;
static MPI_Datatype strided; /* 2 ints with a 1-int hole: extent 3 ints */

static void check(int ok, const char* what, const char* comm, int count, int root)
{
    checks++;
    if (!ok) {
        failures++;
        if (failures <= 20)
            fprintf(stderr, "rank %d: FAIL %s on %s, count %d, root %d\n", world_rank, what, comm, count, root);
    }
}

/* A commutative, associative user op: sum modulo a prime, on ints or on
 * `strided` elements (ints 0 and 2 of every 3; int 1 is a hole). */
static void mod_sum(void* in, void* inout, int* len, MPI_Datatype* type)
{
    const int* a = in;
    int* b = inout;
    if (*type == strided) {
        for (long i = 0; i < 3L * *len; i += 3) {
            b[i] = (int)(((long)a[i] + b[i]) % 1000003);
            b[i + 2] = (int)(((long)a[i + 2] + b[i + 2]) % 1000003);
        }
        return;
    }
    for (int i = 0; i < *len; i++)
        b[i] = (int)(((long)a[i] + b[i]) % 1000003);
}

struct kind {
    const char* name;
    MPI_Datatype type;
    MPI_Op op;
    int ints; /* ints of memory per element (extent / sizeof(int)) */
};

static void fill(int* buf, long n, int seed)
{
    for (long i = 0; i < n; i++)
        buf[i] = (int)((seed * 131 + i * 7) % 23) - 5;
}

/* The input of a reduction: small integers as ints or as doubles, and
 * for MINLOC/MAXLOC pairs the rank as the index. */
static void fill_input(int* buf, long n, int seed, const struct kind* k, int rank)
{
    fill(buf, n, seed);
    if (k->type == MPI_DOUBLE)
        for (long i = 0; i + 1 < n; i += 2)
            ((double*)buf)[i / 2] = (double)((seed * 17 + i) % 29 - 9);
    if (k->type == MPI_2INT)
        for (long i = 1; i < n; i += 2)
            buf[i] = rank;
}

/* MPI_Reduce's result computed without MPICH's reduce: the inputs gathered
 * to the root and folded there with MPI_Reduce_local, written into `ref`
 * through pack/unpack so holes of the type stay as they were. */
static void reference_reduce(
    const void* in, void* ref, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm)
{
    int rank, size, bytes;
    MPI_Aint lb, extent;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Type_get_extent(type, &lb, &extent);
    char* all = calloc((size_t)size * count * extent + 1, 1);
    PMPI_Gather(in == MPI_IN_PLACE ? ref : in, count, type, all, count, type, root, comm);
    if (rank != root || count == 0) {
        free(all);
        return;
    }
    char* acc = all + (size_t)(size - 1) * count * extent;
    for (int r = size - 2; r >= 0; r--)
        PMPI_Reduce_local(all + (size_t)r * count * extent, acc, count, type, op);
    PMPI_Pack_size(count, type, comm, &bytes);
    char* packed = malloc(bytes + 1);
    int pos = 0;
    PMPI_Pack(acc, count, type, packed, bytes, &pos, comm);
    pos = 0;
    PMPI_Unpack(packed, bytes, &pos, ref, count, type, comm);
    free(packed);
    free(all);
}

static void test_reduce(MPI_Comm comm, const char* cname, const struct kind* k, int count)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    long n = (long)count * k->ints + 1;
    int* in = malloc(n * sizeof(int));
    int* ours = malloc(n * sizeof(int));
    int* ref = malloc(n * sizeof(int));
    for (int root = 0; root < size; root++) {
        for (int in_place = 0; in_place < 2; in_place++) {
            fill_input(in, n, rank + root, k, rank);
            fill(ours, n, 99);
            fill(ref, n, 99);
            if (in_place && rank == root) {
                memcpy(ours, in, n * sizeof(int));
                memcpy(ref, in, n * sizeof(int));
                MPI_Reduce(MPI_IN_PLACE, ours, count, k->type, k->op, root, comm);
                reference_reduce(MPI_IN_PLACE, ref, count, k->type, k->op, root, comm);
            } else {
                MPI_Reduce(in, ours, count, k->type, k->op, root, comm);
                reference_reduce(in, ref, count, k->type, k->op, root, comm);
            }
            char what[96];
            snprintf(what, sizeof what, "reduce %s%s", k->name, in_place ? " in place" : "");
            check(rank != root || memcmp(ours, ref, n * sizeof(int)) == 0, what, cname, count, root);
        }
    }
    free(in);
    free(ours);
    free(ref);
}

static void test_rsb(MPI_Comm comm, const char* cname, const struct kind* k, int count)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    long n = (long)count * size * k->ints + 1;
    int* in = malloc(n * sizeof(int));
    int* ours = malloc(n * sizeof(int));
    int* ref = malloc(n * sizeof(int));
    for (int in_place = 0; in_place < 2; in_place++) {
        fill_input(in, n, rank, k, rank);
        fill(ours, n, 77);
        fill(ref, n, 77);
        if (in_place) {
            memcpy(ours, in, n * sizeof(int));
            memcpy(ref, in, n * sizeof(int));
            MPI_Reduce_scatter_block(MPI_IN_PLACE, ours, count, k->type, k->op, comm);
            PMPI_Reduce_scatter_block(MPI_IN_PLACE, ref, count, k->type, k->op, comm);
            /* Only the first block is defined after an in-place call. */
            long used = (long)count * k->ints;
            memset(ours + used, 0, (n - used) * sizeof(int));
            memset(ref + used, 0, (n - used) * sizeof(int));
        } else {
            MPI_Reduce_scatter_block(in, ours, count, k->type, k->op, comm);
            PMPI_Reduce_scatter_block(in, ref, count, k->type, k->op, comm);
        }
        char what[96];
        snprintf(what, sizeof what, "reduce_scatter_block %s%s", k->name, in_place ? " in place" : "");
        check(memcmp(ours, ref, n * sizeof(int)) == 0, what, cname, count, -1);
    }
    free(in);
    free(ours);
    free(ref);
}

/* Alltoall: ints sent, received as `strided` pairs (count even), or the
 * same type both ways, and in place. */
static void test_alltoall(MPI_Comm comm, const char* cname, int count)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int pairs = count / 2;
    long sn = (long)size * count + 1, rn = (long)size * pairs * 3 + (long)size * count + 1;
    int* in = malloc(sn * sizeof(int));
    int* ours = malloc(rn * sizeof(int));
    int* ref = malloc(rn * sizeof(int));
    for (int mode = 0; mode < 3; mode++) {
        fill(in, sn, rank * 3 + 1);
        fill(ours, rn, 55);
        fill(ref, rn, 55);
        const char* what = "alltoall int";
        if (mode == 0) {
            MPI_Alltoall(in, count, MPI_INT, ours, count, MPI_INT, comm);
            PMPI_Alltoall(in, count, MPI_INT, ref, count, MPI_INT, comm);
        } else if (mode == 1) {
            what = "alltoall int -> strided";
            MPI_Alltoall(in, 2 * pairs, MPI_INT, ours, pairs, strided, comm);
            PMPI_Alltoall(in, 2 * pairs, MPI_INT, ref, pairs, strided, comm);
        } else {
            what = "alltoall strided in place";
            memcpy(ours, in, sn * sizeof(int));
            memcpy(ref, in, sn * sizeof(int));
            MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ours, pairs, strided, comm);
            PMPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ref, pairs, strided, comm);
        }
        check(memcmp(ours, ref, rn * sizeof(int)) == 0, what, cname, count, -1);
    }
    free(in);
    free(ours);
    free(ref);
}

/* Alltoallv with counts that differ per pair (zeros included) and gaps
 * between blocks; symmetric counts for the in-place form. */
static int pair_count(int s, int d, int count, int sym)
{
    if (sym)
        return (s + d) % 3 == 0 ? 0 : count + (s + d) % 4;
    return (s * 7 + d * 3) % 5 == 0 ? 0 : count + (s * 5 + d) % 4;
}

static void test_alltoallv(MPI_Comm comm, const char* cname, int count)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *sc = malloc(size * sizeof(int)), *sd = malloc(size * sizeof(int));
    int *rc = malloc(size * sizeof(int)), *rd = malloc(size * sizeof(int));
    for (int mode = 0; mode < 2; mode++) {
        const int sym = mode == 1;
        /* Send ints, receive `strided` pairs: pair counts, two ints each. */
        long sn = 1, rn = 1;
        for (int p = 0; p < size; p++) {
            sd[p] = (int)sn;
            sc[p] = 2 * pair_count(rank, p, count, sym);
            sn += sc[p] + 1;
            rd[p] = (int)(rn / 3) + 1;
            rc[p] = pair_count(p, rank, count, sym);
            rn = (rd[p] + rc[p]) * 3L;
        }
        rn += 3 * (long)size * (count + 4) + 3;
        if (sym && rn < sn)
            rn = sn;
        int* in = malloc(sn * sizeof(int));
        int* ours = malloc(rn * sizeof(int));
        int* ref = malloc(rn * sizeof(int));
        fill(in, sn, rank + 11);
        fill(ours, rn, 33);
        fill(ref, rn, 33);
        if (!sym) {
            MPI_Alltoallv(in, sc, sd, MPI_INT, ours, rc, rd, strided, comm);
            PMPI_Alltoallv(in, sc, sd, MPI_INT, ref, rc, rd, strided, comm);
        } else {
            MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, ours, rc, rd, strided, comm);
            PMPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, ref, rc, rd, strided, comm);
        }
        check(memcmp(ours, ref, rn * sizeof(int)) == 0, sym ? "alltoallv in place" : "alltoallv int -> strided", cname,
            count, -1);
        free(in);
        free(ours);
        free(ref);
    }
    free(sc);
    free(sd);
    free(rc);
    free(rd);
}

static void run_all(MPI_Comm comm, const char* cname, int max_count)
{
    MPI_Op user;
    MPI_Op_create(mod_sum, 1, &user);
    const struct kind kinds[] = {
        {"int sum", MPI_INT, MPI_SUM, 1},
        {"double sum", MPI_DOUBLE, MPI_SUM, 2},
        {"int max", MPI_INT, MPI_MAX, 1},
        {"strided user op", strided, user, 3},
        {"2int minloc", MPI_2INT, MPI_MINLOC, 2},
        {"2int maxloc", MPI_2INT, MPI_MAXLOC, 2},
        {"int user op", MPI_INT, user, 1},
    };
    const int counts[] = {0, 1, 2, 3, 5, 7, 13, 64, 1000, 4099, 20011};
    for (unsigned c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        int count = counts[c];
        if (count > max_count)
            break;
        for (unsigned i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
            test_reduce(comm, cname, &kinds[i], count);
            test_rsb(comm, cname, &kinds[i], count);
        }
        test_alltoall(comm, cname, count);
        test_alltoallv(comm, cname, count);
    }
    MPI_Op_free(&user);
}

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    int max_count = argc > 1 ? atoi(argv[1]) : 1000;
    MPI_Type_vector(2, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);

    run_all(MPI_COMM_WORLD, "world", max_count);
    /* Without world rank 1, in reverse order. */
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank == 1 && size > 2 ? MPI_UNDEFINED : 0, -world_rank, &sub);
    if (sub != MPI_COMM_NULL) {
        run_all(sub, "sub", max_count);
        MPI_Comm_free(&sub);
    }

    int total[2] = {checks, failures}, sum[2];
    PMPI_Reduce(total, sum, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (world_rank == 0)
        printf("reduce_a2a: %d checks, %d failed: %s\n", sum[0], sum[1], sum[1] ? "FAIL" : "OK");
    MPI_Type_free(&strided);
    MPI_Finalize();
    return sum[1] != 0 && world_rank == 0;
}
