/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fft_alltoall.c - hashi-fft-alltoall, the communication of a slab-
 * decomposed 3-D FFT: every step a pass over the local slab (the 1-D FFTs
 * along the local axes stand for it: a memory-bound complex multiply), a
 * pack into one block per destination, MPI_Alltoall of those blocks, and
 * an unpack (the transpose).  With 4 ranks and 8 MiB blocks, most of a
 * step is the alltoall, as in the FFT program of issue 18.
 *
 *   mpiexec -n P ./hashi-fft-alltoall [--block BYTES] [--steps N] [--quick]
 *
 * Output (rank 0), whitespace separated, seconds per step over the steps
 * after one warm-up step; each step's time is the slowest rank's:
 *   step     BLOCK_BYTES STEPS MEDIAN_S FASTEST_S
 *   alltoall BLOCK_BYTES STEPS MEDIAN_S FASTEST_S
 * then "# end".  Every block carries (step, source, destination) and is
 * checked after the alltoall: a wrong or stale block fails the run (exit 3).
 */
#include <mpi.h>
#include <complex.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_STEPS = 1000 };

struct run {
    int rank, size;
    size_t block;   /* bytes per (source, destination) pair */
    double complex *slab, *send, *recv;
};

static long parse(const char* opt, const char* text, long min, long max, int rank)
{
    char* end = NULL;
    errno = 0;
    long v = text ? strtol(text, &end, 10) : 0;
    if (!text || errno || *end || end == text || v < min || v > max) {
        if (rank == 0)
            fprintf(stderr, "hashi-fft-alltoall: %s needs a whole number from %ld to %ld, got '%s'\n", opt, min, max,
                text ? text : "");
        MPI_Finalize();
        exit(2);
    }
    return v;
}

/* The stand-in for the local 1-D FFTs: one read-modify-write pass. */
static void local_pass(struct run* r, int step)
{
    size_t n = r->block * (size_t)r->size / sizeof(double complex);
    double complex w = 0.6 + 0.8 * I * (step % 2 ? 1 : -1); /* |w| = 1: values stay bounded */
    for (size_t i = 0; i < n; i++)
        r->slab[i] = r->slab[i] * w;
}

/* The first element of each block names it, so the check after the
 * alltoall sees a block from the wrong rank or from an earlier step. */
static double complex tag(int step, int src, int dst)
{
    return (double)step + I * (double)(src * 4096 + dst);
}

/* Pack: block d of send holds every size-th element of the slab from d on
 * (a strided gather, as the transpose of a slab decomposition is). */
static void pack(struct run* r, int step)
{
    size_t per = r->block / sizeof(double complex);
    for (int d = 0; d < r->size; d++) {
        double complex* out = r->send + (size_t)d * per;
        for (size_t i = 0; i < per; i++)
            out[i] = r->slab[i * (size_t)r->size + (size_t)d];
        out[0] = tag(step, r->rank, d);
    }
}

/* Unpack: the inverse gather, checking each block's tag first. */
static int unpack(struct run* r, int step)
{
    size_t per = r->block / sizeof(double complex);
    for (int s = 0; s < r->size; s++) {
        const double complex* in = r->recv + (size_t)s * per;
        if (in[0] != tag(step, s, r->rank)) {
            fprintf(stderr, "hashi-fft-alltoall: rank %d, step %d: the block from rank %d carries (%g, %g), "
                            "expected (%g, %g): the alltoall delivered a wrong block\n",
                r->rank, step, s, creal(in[0]), cimag(in[0]), creal(tag(step, s, r->rank)),
                cimag(tag(step, s, r->rank)));
            return -1;
        }
        for (size_t i = 1; i < per; i++)
            r->slab[i * (size_t)r->size + (size_t)s] = in[i];
    }
    return 0;
}

static int by_value(const void* a, const void* b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

static void report(const char* what, size_t block, int steps, double* t)
{
    qsort(t, (size_t)steps, sizeof *t, by_value);
    double median = steps % 2 ? t[steps / 2] : (t[steps / 2 - 1] + t[steps / 2]) / 2;
    printf("%s %zu %d %.6f %.6f\n", what, block, steps, median, t[0]);
}

int main(int argc, char** argv)
{
    struct run r = { 0 };
    long block = 8L << 20, steps = 10;
    static double step_s[MAX_STEPS], a2a_s[MAX_STEPS];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &r.size);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) {
            block = 1L << 20;
            steps = 3;
        } else if (!strcmp(argv[i], "--block")) {
            block = parse("--block", i + 1 < argc ? argv[++i] : NULL, 16, 1L << 30, r.rank);
        } else if (!strcmp(argv[i], "--steps")) {
            steps = parse("--steps", i + 1 < argc ? argv[++i] : NULL, 1, MAX_STEPS, r.rank);
        } else {
            if (r.rank == 0)
                fprintf(stderr, "usage: hashi-fft-alltoall [--block BYTES] [--steps N] [--quick]\n"
                                "hashi-fft-alltoall: unknown option '%s'\n", argv[i]);
            MPI_Finalize();
            return 2;
        }
    }
    r.block = (size_t)block / sizeof(double complex) * sizeof(double complex);
    size_t total = r.block * (size_t)r.size;
    /* The MPI count of one block must fit an int. */
    if (r.block / sizeof(double complex) > INT32_MAX) {
        if (r.rank == 0)
            fprintf(stderr, "hashi-fft-alltoall: --block %ld is too large for one MPI count\n", block);
        MPI_Finalize();
        return 2;
    }
    r.slab = malloc(total);
    r.send = malloc(total);
    r.recv = malloc(total);
    if (!r.slab || !r.send || !r.recv) {
        fprintf(stderr, "hashi-fft-alltoall: rank %d: cannot allocate 3 x %zu bytes\n", r.rank, total);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    for (size_t i = 0; i < total / sizeof(double complex); i++)
        r.slab[i] = (double)(i % 1000) + I * (double)r.rank;
    memset(r.send, 0, total);
    memset(r.recv, 0, total);

    if (r.rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(lib, &len);
        lib[strcspn(lib, "\n")] = '\0';
        printf("# library: %s\n# ranks: %d\n# block: %zu bytes per pair, %zu per rank\n", lib, r.size, r.block,
            total);
        printf("# columns: what block_bytes steps median_s fastest_s (slowest rank per step)\n");
        fflush(stdout);
    }
    int bad = 0;
    for (int s = 0; s <= steps && !bad; s++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        local_pass(&r, s);
        pack(&r, s);
        double t1 = MPI_Wtime();
        MPI_Alltoall(r.send, (int)(r.block / sizeof(double complex)), MPI_C_DOUBLE_COMPLEX, r.recv,
            (int)(r.block / sizeof(double complex)), MPI_C_DOUBLE_COMPLEX, MPI_COMM_WORLD);
        double t2 = MPI_Wtime();
        int mine = unpack(&r, s) < 0;
        double t3 = MPI_Wtime();
        double local[2] = { t3 - t0, t2 - t1 }, slowest[2];
        MPI_Allreduce(local, slowest, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(&mine, &bad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
        if (s > 0) { /* step 0 is the warm-up */
            step_s[s - 1] = slowest[0];
            a2a_s[s - 1] = slowest[1];
        }
    }
    if (r.rank == 0 && !bad) {
        report("step", r.block, (int)steps, step_s);
        report("alltoall", r.block, (int)steps, a2a_s);
        printf("# end\n");
        fflush(stdout);
    }
    free(r.slab);
    free(r.send);
    free(r.recv);
    MPI_Finalize();
    return bad ? 3 : 0;
}
