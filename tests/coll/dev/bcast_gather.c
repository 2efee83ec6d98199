/* SPDX-License-Identifier: BSD-3-Clause */
/* Development check of the bcast, allgather(v) and barrier algorithms of
 * libhashi-coll (force them with HASHI_COLL_BCAST=..., ...): known data
 * patterns through MPI_Bcast, MPI_Allgather, MPI_Allgatherv and MPI_Barrier
 * on MPI_COMM_WORLD, on a copy with the ranks permuted (clusters no longer
 * contiguous) and on a sub-communicator without rank 1 (uneven clusters),
 * with counts 0, 1, primes and large, every root, MPI_IN_PLACE, a vector
 * type with gaps and mixed datatypes of one type signature.
 * Usage: bcast_gather [large-count]. Prints "OK" or the first errors. */
#include <mpi.h>
#include <unistd.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int errors;
static int wrank;

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            if (errors++ < 10) {                                                                                       \
                fprintf(stderr, "rank %d: ", wrank);                                                                   \
                fprintf(stderr, __VA_ARGS__);                                                                          \
                fputc('\n', stderr);                                                                                   \
            }                                                                                                          \
        }                                                                                                              \
    } while (0)

static int value(int a, int b, int c)
{
    return (int)(((unsigned)a * 1000003u + (unsigned)b * 7919u + (unsigned)c * 31u) & 0x7fffffffu);
}
#define SENTINEL (-7)

/* bcast of count ints as `count` elements of MPI_INT. */
static void bcast_int(MPI_Comm comm, int count, int root, int iter)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    int* b = malloc(sizeof(int) * (count + 2));
    for (int i = 0; i < count + 2; ++i)
        b[i] = rank == root && i > 0 && i <= count ? value(i, root, iter) : SENTINEL;
    MPI_Bcast(b + 1, count, MPI_INT, root, comm);
    for (int i = 0; i < count + 2; ++i) {
        int want = i > 0 && i <= count ? value(i, root, iter) : SENTINEL;
        CHECK(b[i] == want, "bcast int count %d root %d: [%d] = %d, want %d", count, root, i - 1, b[i], want);
        if (b[i] != want)
            break;
    }
    free(b);
}

/* bcast with a vector type with gaps (2 blocks of 3 ints, stride 4) at the
 * root and even ranks, and the same signature as plain ints (6 per
 * element) on odd ranks. */
static void bcast_vector(MPI_Comm comm, int count, int root, int iter)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    MPI_Datatype vec;
    MPI_Type_vector(2, 3, 4, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    const int span = 8 * count; /* extent of vec is 7 ints; the last gap stays sentinel */
    int* b = malloc(sizeof(int) * (span + 8));
    for (int i = 0; i < span + 8; ++i)
        b[i] = SENTINEL;
    const int use_vec = rank == root || rank % 2 == 0;
    /* element e of vec occupies ints e*7 + {0,1,2,4,5,6}. */
    if (rank == root)
        for (int e = 0; e < count; ++e)
            for (int k = 0; k < 6; ++k)
                b[e * 7 + k + (k >= 3)] = value(e * 6 + k, root, iter);
    if (use_vec)
        MPI_Bcast(b, count, vec, root, comm);
    else
        MPI_Bcast(b, 6 * count, MPI_INT, root, comm);
    for (int e = 0; e < count && use_vec; ++e) {
        for (int k = 0; k < 7; ++k) {
            int want = k == 3 ? SENTINEL : value(e * 6 + k - (k > 3), root, iter);
            CHECK(b[e * 7 + k] == want, "bcast vec count %d root %d: elem %d int %d = %d, want %d", count, root, e, k,
                b[e * 7 + k], want);
        }
    }
    for (int i = 0; i < 6 * count && !use_vec; ++i)
        CHECK(b[i] == value(i, root, iter), "bcast int-vs-vec count %d root %d: [%d] = %d", count, root, i, b[i]);
    CHECK(b[span + 7] == SENTINEL, "bcast vec wrote past the end");
    free(b);
    MPI_Type_free(&vec);
}

/* allgather of count ints per rank; in place or not; recv as plain ints,
 * or as a vector type with gaps (element = 1 int followed by a gap). */
static void allgather(MPI_Comm comm, int count, int in_place, int gapped, int iter)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Datatype rtype = MPI_INT, gap;
    int stride = 1;
    if (gapped) {
        MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &gap);
        MPI_Type_commit(&gap);
        rtype = gap;
        stride = 2;
    }
    const long n = (long)count * size;
    int* r = malloc(sizeof(int) * (n * stride + 1));
    int* s = malloc(sizeof(int) * (count + 1));
    for (long i = 0; i < n * stride + 1; ++i)
        r[i] = SENTINEL;
    for (int i = 0; i < count; ++i)
        s[i] = value(rank, i, iter);
    if (in_place)
        for (int i = 0; i < count; ++i)
            r[((long)rank * count + i) * stride] = value(rank, i, iter);
    MPI_Allgather(in_place ? MPI_IN_PLACE : s, count, MPI_INT, r, count, rtype, comm);
    int bad = 0;
    for (long i = 0; i < n * stride + 1 && !bad; ++i) {
        int want = i % stride == 0 && i < n * stride ? value((int)(i / stride / count), (int)(i / stride % count), iter)
                                                     : SENTINEL;
        if (r[i] != want) {
            bad = 1;
            CHECK(0, "allgather count %d in_place %d gapped %d: [%ld] = %d, want %d", count, in_place, gapped, i, r[i],
                want);
        }
    }
    free(r);
    free(s);
    if (gapped)
        MPI_Type_free(&gap);
}

/* allgather where odd ranks describe both buffers with a contiguous type
 * of `count` ints (one element per block) and even ranks with plain ints:
 * one type signature, different datatypes. */
static void allgather_mixed(MPI_Comm comm, int count, int iter)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (count == 0)
        return;
    MPI_Datatype block;
    MPI_Type_contiguous(count, MPI_INT, &block);
    MPI_Type_commit(&block);
    const long n = (long)count * size;
    int* r = malloc(sizeof(int) * n);
    int* s = malloc(sizeof(int) * count);
    for (long i = 0; i < n; ++i)
        r[i] = SENTINEL;
    for (int i = 0; i < count; ++i)
        s[i] = value(rank, i, iter);
    if (rank % 2)
        MPI_Allgather(s, 1, block, r, 1, block, comm);
    else
        MPI_Allgather(s, count, MPI_INT, r, count, MPI_INT, comm);
    for (long i = 0; i < n; ++i) {
        int want = value((int)(i / count), (int)(i % count), iter);
        if (r[i] != want) {
            CHECK(0, "allgather mixed count %d: [%ld] = %d, want %d", count, i, r[i], want);
            break;
        }
    }
    free(r);
    free(s);
    MPI_Type_free(&block);
}

/* bcast of MPI_DOUBLE_INT, a predefined type with padding. */
static void bcast_double_int(MPI_Comm comm, int count, int root, int iter)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    struct di {
        double d;
        int i;
    }* b = malloc(sizeof(struct di) * (count + 1));
    for (int k = 0; k < count + 1; ++k) {
        b[k].d = rank == root ? value(k, root, iter) * 0.5 : -1;
        b[k].i = rank == root ? value(root, k, iter) : -1;
    }
    MPI_Bcast(b, count, MPI_DOUBLE_INT, root, comm);
    for (int k = 0; k < count; ++k) {
        if (b[k].d != value(k, root, iter) * 0.5 || b[k].i != value(root, k, iter)) {
            CHECK(0, "bcast double_int count %d root %d: [%d] = (%g, %d)", count, root, k, b[k].d, b[k].i);
            break;
        }
    }
    CHECK(rank == root || (b[count].d == -1 && b[count].i == -1), "bcast double_int wrote past the end");
    free(b);
}

/* allgatherv with counts that differ per rank, blocks in reverse order
 * with gaps between them; in place or not. */
static void allgatherv(MPI_Comm comm, int base, int in_place, int iter)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int* counts = malloc(sizeof(int) * size);
    int* displs = malloc(sizeof(int) * size);
    long total = 0;
    for (int q = 0; q < size; ++q) {
        counts[q] = (q % 3) * base + (q % 2);
        total += counts[q] + 3;
    }
    long at = 3;
    for (int q = size - 1; q >= 0; --q) {
        displs[q] = (int)at;
        at += counts[q] + 3;
    }
    int* r = malloc(sizeof(int) * (total + 3));
    int* s = malloc(sizeof(int) * (counts[rank] + 1));
    for (long i = 0; i < total + 3; ++i)
        r[i] = SENTINEL;
    for (int i = 0; i < counts[rank]; ++i) {
        s[i] = value(rank, i, iter + 5);
        if (in_place)
            r[displs[rank] + i] = s[i];
    }
    MPI_Allgatherv(in_place ? MPI_IN_PLACE : s, counts[rank], MPI_INT, r, counts, displs, MPI_INT, comm);
    int* want = malloc(sizeof(int) * (total + 3));
    for (long i = 0; i < total + 3; ++i)
        want[i] = SENTINEL;
    for (int q = 0; q < size; ++q)
        for (int i = 0; i < counts[q]; ++i)
            want[displs[q] + i] = value(q, i, iter + 5);
    for (long i = 0; i < total + 3; ++i) {
        if (r[i] != want[i]) {
            CHECK(0, "allgatherv base %d in_place %d: [%ld] = %d, want %d", base, in_place, i, r[i], want[i]);
            break;
        }
    }
    free(want);
    free(r);
    free(s);
    free(counts);
    free(displs);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Nobody leaves the barrier before the last one entered it (the ranks
 * share a clock: they run on one machine). */
static void barrier(MPI_Comm comm, int iter)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    usleep((unsigned)((rank * 7 + iter * 13) % size) * 2000);
    double times[2] = {now(), 0};
    MPI_Barrier(comm);
    times[1] = now();
    double* all = malloc(sizeof(double) * 2 * size);
    PMPI_Gather(times, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, 0, comm);
    if (rank == 0) {
        double last_in = 0, first_out = 1e300;
        for (int q = 0; q < size; ++q) {
            if (all[2 * q] > last_in)
                last_in = all[2 * q];
            if (all[2 * q + 1] < first_out)
                first_out = all[2 * q + 1];
        }
        CHECK(first_out >= last_in, "barrier %d: a rank left %.6f s before the last one entered", iter,
            last_in - first_out);
    }
    free(all);
}

static void suite(MPI_Comm comm, int large, const char* name)
{
    int size;
    MPI_Comm_size(comm, &size);
    const int counts[] = {0, 1, 2, 7, 13, 97, 1021, 65537};
    int iter = 0;
    for (unsigned c = 0; c < sizeof counts / sizeof *counts; ++c)
        for (int root = 0; root < size; ++root) {
            bcast_int(comm, counts[c], root, ++iter);
            if (counts[c] < 20000)
                bcast_vector(comm, counts[c], root, ++iter);
        }
    for (int root = 0; root < size; root += 3)
        bcast_int(comm, large, root, ++iter);
    for (int root = 0; root < size; root += 2)
        bcast_double_int(comm, root == 0 ? large / 4 : 101, root, ++iter);
    bcast_vector(comm, large / 6, size - 1, ++iter);
    const int gcounts[] = {0, 1, 3, 31, 1009, 40009};
    for (unsigned c = 0; c < sizeof gcounts / sizeof *gcounts; ++c)
        for (int mode = 0; mode < 4; ++mode)
            allgather(comm, gcounts[c], mode & 1, mode >> 1, ++iter);
    allgather(comm, large / size, 0, 0, ++iter);
    allgather_mixed(comm, 1, ++iter);
    allgather_mixed(comm, 4099, ++iter);
    const int vbase[] = {0, 1, 5, 211, 30011};
    for (unsigned c = 0; c < sizeof vbase / sizeof *vbase; ++c)
        for (int ip = 0; ip < 2; ++ip)
            allgatherv(comm, vbase[c], ip, ++iter);
    for (int i = 0; i < 4; ++i)
        barrier(comm, i);
    if (wrank == 0)
        printf("%s: done (%d ranks)\n", name, size);
}

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int large = argc > 1 ? atoi(argv[1]) : 300007;
    suite(MPI_COMM_WORLD, large, "world");
    MPI_Comm perm, sub;
    MPI_Comm_split(MPI_COMM_WORLD, 0, (wrank * 5 + 3) % size, &perm);
    suite(perm, large, "permuted");
    MPI_Comm_split(MPI_COMM_WORLD, wrank == 1 && size > 2 ? MPI_UNDEFINED : 0, wrank, &sub);
    if (sub != MPI_COMM_NULL) {
        suite(sub, large / 3, "without rank 1");
        MPI_Comm_free(&sub);
    }
    MPI_Comm_free(&perm);
    int total = 0;
    MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0)
        printf(total ? "FAILED: %d errors\n" : "OK\n", total);
    MPI_Finalize();
    return total != 0;
}
