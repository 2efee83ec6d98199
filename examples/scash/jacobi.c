/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Jacobi relaxation of Laplace's equation on an n x n grid on SCASH. Two
 * shared grids, old and new; each process owns a band of rows, computes
 * its rows of new from old (reading one row of each neighbour's band), then
 * a barrier, then the grids swap roles. The top edge is held at 1, the
 * others at 0.
 *
 *   jacobi [-n N] [-i ITERS] [-d block|cyclic|first|hand] [-S] [-c] [-q] [-o FILE]
 *     -d   initial homes (default block); hand: each band's home at its owner
 *     -S   static homes (no migration)
 *     -c   check the result bit for bit against a sequential run on process 0
 *     -o   process 0 writes the final grid to FILE (raw doubles), to compare runs
 */
#include "scash.h"

#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int n = 256, iters = 50;

static void init(double* g)
{
    for (int j = 0; j < n; ++j)
        g[j] = 1.0;
}

/* Rows [lo, hi) of dst from src; the edges never change. */
static void sweep(double* dst, const double* src, int lo, int hi)
{
    if (lo < 1)
        lo = 1;
    if (hi > n - 1)
        hi = n - 1;
    for (int i = lo; i < hi; ++i)
        for (int j = 1; j < n - 1; ++j)
            dst[(size_t)i * n + j] = 0.25 *
                (src[(size_t)(i - 1) * n + j] + src[(size_t)(i + 1) * n + j] + src[(size_t)i * n + j - 1] +
                    src[(size_t)i * n + j + 1]);
}

/* CPU seconds of this process (all its threads): less disturbed than the
 * wall time by other jobs on a shared machine. */
static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char** argv)
{
    int provided, check = 0, quiet = 0, migrate = 1, dist = SCASH_BLOCK, hand = 0;
    const char* dist_name = "block";
    const char* out_file = NULL;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-i") && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-d") && i + 1 < argc) {
            dist_name = argv[++i];
            hand = !strcmp(dist_name, "hand");
            dist = !strcmp(dist_name, "cyclic") ? SCASH_CYCLIC
                : !strcmp(dist_name, "first")   ? SCASH_FIRST_TOUCH
                                                : SCASH_BLOCK;
        } else if (!strcmp(argv[i], "-S"))
            migrate = 0;
        else if (!strcmp(argv[i], "-c"))
            check = 1;
        else if (!strcmp(argv[i], "-q"))
            quiet = 1;
        else if (!strcmp(argv[i], "-o") && i + 1 < argc)
            out_file = argv[++i];
        else {
            fprintf(stderr, "usage: jacobi [-n N] [-i ITERS] [-d block|cyclic|first|hand] [-S] [-c] [-q] [-o FILE]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (n < 3 || iters < 0) {
        fprintf(stderr, "jacobi: need n >= 3 (got %d) and iters >= 0 (got %d)\n", n, iters);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (scash_init() != SCASH_OK)
        MPI_Abort(MPI_COMM_WORLD, 1);
    scash_set_migration(migrate, 2);
    const int me = scash_rank(), np = scash_nprocs();
    const size_t cells = (size_t)n * n;
    double *a, *b;
    if (scash_alloc(cells * sizeof(double), dist, (void**)&a) != SCASH_OK ||
        scash_alloc(cells * sizeof(double), dist, (void**)&b) != SCASH_OK)
        MPI_Abort(MPI_COMM_WORLD, 1);
    const int lo = (int)((long)n * me / np), hi = (int)((long)n * (me + 1) / np);
    for (int p = 0; hand && p < np; ++p) {
        /* Process p's band of rows in both grids, homed at p. */
        const int plo = (int)((long)n * p / np), phi = (int)((long)n * (p + 1) / np);
        const size_t bytes = (size_t)(phi - plo) * n * sizeof(double);
        if (bytes &&
            (scash_set_home(a + (size_t)plo * n, bytes, p) != SCASH_OK ||
                scash_set_home(b + (size_t)plo * n, bytes, p) != SCASH_OK))
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (me == 0) {
        init(a);
        init(b);
    }
    scash_barrier();

    double t0 = MPI_Wtime(), c0 = cpu_seconds();
    double *src = a, *dst = b;
    for (int t = 0; t < iters; ++t) {
        sweep(dst, src, lo, hi);
        scash_barrier();
        double* tmp = src;
        src = dst;
        dst = tmp;
    }
    double seconds = MPI_Wtime() - t0, cpu = cpu_seconds() - c0, cpu_total = 0;
    MPI_Reduce(&cpu, &cpu_total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);

    scash_stats_t s;
    scash_stats_total(&s);
    int status = 0;
    if (me == 0) {
        printf("jacobi: n=%d iters=%d P=%d homes=%s%s time=%.3f s cpu=%.3f s\n", n, iters, np, dist_name,
            migrate ? "+dynamic" : "+static", seconds, cpu_total);
        if (!quiet)
            printf("jacobi: stats: messages=%llu bytes=%llu pages_fetched=%llu diffs=%llu diff_bytes=%llu "
                   "home_moves=%llu barriers=%llu\n",
                (unsigned long long)s.messages, (unsigned long long)s.bytes, (unsigned long long)s.pages_fetched,
                (unsigned long long)s.diffs_sent, (unsigned long long)s.diff_bytes, (unsigned long long)s.home_moves,
                (unsigned long long)s.barriers / np);
        if (check) {
            double* sa = calloc(cells, sizeof(double));
            double* sb = calloc(cells, sizeof(double));
            init(sa);
            init(sb);
            double *ss = sa, *sd = sb;
            for (int t = 0; t < iters; ++t) {
                sweep(sd, ss, 0, n);
                double* tmp = ss;
                ss = sd;
                sd = tmp;
            }
            size_t diff = 0;
            for (size_t i = 0; i < cells; ++i)
                diff += memcmp(&ss[i], &src[i], sizeof(double)) != 0;
            printf("jacobi: check: %s (%zu of %zu values differ from the sequential run)\n",
                diff ? "DIFFERENT" : "bitwise equal to the sequential run", diff, cells);
            status = diff != 0;
            free(sa);
            free(sb);
        }
    }
    if (me == 0 && out_file) {
        /* Through a private buffer: shared pages must not reach a system call. */
        FILE* f = fopen(out_file, "wb");
        double* row = malloc((size_t)n * sizeof(double));
        for (int i = 0; f && row && i < n; ++i) {
            memcpy(row, src + (size_t)i * n, (size_t)n * sizeof(double));
            if (fwrite(row, sizeof(double), (size_t)n, f) != (size_t)n)
                break;
        }
        if (!f || !row || ferror(f) | fclose(f)) {
            fprintf(stderr, "jacobi: writing %s failed\n", out_file);
            status = 1;
        }
        free(row);
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    scash_free(b);
    scash_free(a);
    scash_finalize();
    MPI_Finalize();
    return status;
}
