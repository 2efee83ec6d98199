/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Blocked LU factorization (no pivoting) of an n x n matrix on SCASH.
 *
 * The matrix is cut into B x B blocks, each stored contiguously
 * (column-major inside the block). Block (I,J) belongs to one process by a
 * 2-D scatter over a rows x cols process grid. As in SPLASH-2's LU, each
 * process's blocks are allocated together, one shared region per process
 * (-l owner, the default): with block or cyclic homes those regions are
 * spread over all processes, so most of an owner's pages start with a
 * remote home; placing each region's home at its owner by hand (-d hand)
 * is the optimum, which dynamic homes should find by themselves. -l one
 * puts all blocks, grouped by owner, in one region instead: then static
 * block homes are already the owners' (with P dividing the pages evenly).
 *
 * Step K of the factorization:
 *   1. the owner of (K,K) factors it (L and U in place);       barrier
 *   2. the owners of (I,K), I > K, compute A(I,K) U(K,K)^-1, and the owners
 *      of (K,J), J > K, compute L(K,K)^-1 A(K,J);              barrier
 *   3. the owner of (I,J), I,J > K, updates A(I,J) -= A(I,K) A(K,J).
 * Step 3 of K and step 1 of K+1 need no barrier between them: (K+1,K+1)
 * is updated and then factored by the same process.
 *
 *   lu [-n N] [-b B] [-d block|cyclic|first|hand] [-l owner|one] [-S] [-c] [-q] [-v] [-o FILE]
 *     -d   initial homes (default cyclic); hand: each block's home at its owner
 *     -l   layout: one region per owner (default), or one region for all
 *     -S   static homes (no migration)
 *     -c   check the result bit for bit against a sequential run on process 0
 *     -v   every process prints its fill time (to the end of the first
 *          barrier) and its own counters of the timed part, to compare runs
 *     -o   process 0 writes the factored matrix to FILE (raw doubles, the
 *          blocks in column-major block order), to compare runs
 */
#include "scash.h"

#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int n = 256, bs = 16, nb, grid_rows, grid_cols;

static int owner(int I, int J)
{
    return (J % grid_cols) + (I % grid_rows) * grid_cols;
}

static double initial(int i, int j)
{
    return (double)((i * 31 + j * 17) % 101) / 101.0 + (i == j ? n : 0);
}

/* D = L U in place, L unit lower. */
static void lu0(double* d)
{
    for (int k = 0; k < bs; ++k) {
        for (int i = k + 1; i < bs; ++i)
            d[i + k * bs] /= d[k + k * bs];
        for (int j = k + 1; j < bs; ++j)
            for (int i = k + 1; i < bs; ++i)
                d[i + j * bs] -= d[i + k * bs] * d[k + j * bs];
    }
}

/* A = A U^-1 (U: upper triangle of d). */
static void bdiv(double* a, const double* d)
{
    for (int k = 0; k < bs; ++k) {
        for (int i = 0; i < bs; ++i)
            a[i + k * bs] /= d[k + k * bs];
        for (int j = k + 1; j < bs; ++j)
            for (int i = 0; i < bs; ++i)
                a[i + j * bs] -= a[i + k * bs] * d[k + j * bs];
    }
}

/* A = L^-1 A (L: unit lower triangle of d). */
static void bmodd(double* a, const double* d)
{
    for (int j = 0; j < bs; ++j)
        for (int k = 0; k < bs; ++k)
            for (int i = k + 1; i < bs; ++i)
                a[i + j * bs] -= d[i + k * bs] * a[k + j * bs];
}

/* C -= A B. */
static void bmod(double* c, const double* a, const double* b)
{
    for (int j = 0; j < bs; ++j)
        for (int k = 0; k < bs; ++k) {
            double t = b[k + j * bs];
            for (int i = 0; i < bs; ++i)
                c[i + j * bs] -= a[i + k * bs] * t;
        }
}

/* The block table: block (I,J) starts at m[I + J * nb]. */
#define BLK(m, I, J) ((m)[(I) + (size_t)(J)*nb])

/* One process's part of the factorization; sync() separates the phases. */
static void factor(double** m, int me, int (*sync)(void))
{
    for (int K = 0; K < nb; ++K) {
        if (owner(K, K) == me)
            lu0(BLK(m, K, K));
        sync();
        for (int I = K + 1; I < nb; ++I)
            if (owner(I, K) == me)
                bdiv(BLK(m, I, K), BLK(m, K, K));
        for (int J = K + 1; J < nb; ++J)
            if (owner(K, J) == me)
                bmodd(BLK(m, K, J), BLK(m, K, K));
        sync();
        for (int J = K + 1; J < nb; ++J)
            for (int I = K + 1; I < nb; ++I)
                if (owner(I, J) == me)
                    bmod(BLK(m, I, J), BLK(m, I, K), BLK(m, K, J));
    }
}

static int no_sync(void)
{
    return 0;
}

static void fill(double** m, int me)
{
    for (int J = 0; J < nb; ++J)
        for (int I = 0; I < nb; ++I)
            if (me < 0 || owner(I, J) == me) {
                double* b = BLK(m, I, J);
                for (int j = 0; j < bs; ++j)
                    for (int i = 0; i < bs; ++i)
                        b[i + j * bs] = initial(I * bs + i, J * bs + j);
            }
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
    int provided, check = 0, quiet = 0, verbose = 0, migrate = 1, dist = SCASH_CYCLIC, hand = 0, one_region = 0;
    const char* dist_name = "cyclic";
    const char* out_file = NULL;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-b") && i + 1 < argc)
            bs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-d") && i + 1 < argc) {
            dist_name = argv[++i];
            hand = !strcmp(dist_name, "hand");
            dist = !strcmp(dist_name, "block") ? SCASH_BLOCK
                : !strcmp(dist_name, "first")  ? SCASH_FIRST_TOUCH
                                               : SCASH_CYCLIC;
        } else if (!strcmp(argv[i], "-l") && i + 1 < argc)
            one_region = !strcmp(argv[++i], "one");
        else if (!strcmp(argv[i], "-S"))
            migrate = 0;
        else if (!strcmp(argv[i], "-c"))
            check = 1;
        else if (!strcmp(argv[i], "-q"))
            quiet = 1;
        else if (!strcmp(argv[i], "-v"))
            verbose = 1;
        else if (!strcmp(argv[i], "-o") && i + 1 < argc)
            out_file = argv[++i];
        else {
            fprintf(stderr,
                "usage: lu [-n N] [-b B] [-d block|cyclic|first|hand] [-l owner|one] [-S] [-c] [-q] [-v] [-o FILE]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (n <= 0 || bs <= 0 || n % bs != 0) {
        fprintf(stderr, "lu: n (%d) must be a positive multiple of the block size B (%d)\n", n, bs);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (scash_init() != SCASH_OK)
        MPI_Abort(MPI_COMM_WORLD, 1);
    scash_set_migration(migrate, 2);
    const int me = scash_rank(), np = scash_nprocs();
    nb = n / bs;
    for (grid_rows = 1; (grid_rows + 1) * (grid_rows + 1) <= np; ++grid_rows)
        ;
    while (np % grid_rows)
        --grid_rows;
    grid_cols = np / grid_rows;

    /* Each owner's blocks together, in column order, each group starting
     * on a page; one region per owner, or all groups in one region. */
    const size_t page_doubles = 4096 / sizeof(double), block_doubles = (size_t)bs * bs;
    double** m = malloc(sizeof(double*) * nb * nb);
    size_t* offset = malloc(sizeof(size_t) * nb * nb); /* in doubles, from the start of the owner's group */
    size_t* group = calloc((size_t)np + 1, sizeof(size_t)); /* owner p's group: [group[p], group[p + 1]) */
    for (int p = 0; p < np; ++p) {
        size_t used = 0;
        for (int J = 0; J < nb; ++J)
            for (int I = 0; I < nb; ++I)
                if (owner(I, J) == p) {
                    offset[I + (size_t)J * nb] = used;
                    used += block_doubles;
                }
        used = (used + page_doubles - 1) / page_doubles * page_doubles;
        group[p + 1] = group[p] + (used ? used : page_doubles);
    }
    const size_t total = group[np];
    double** region = calloc((size_t)np, sizeof(double*)); /* owner p's group starts at region[p] */
    for (int p = 0; p < np; ++p) {
        const size_t bytes = (group[p + 1] - group[p]) * sizeof(double);
        if (one_region) {
            if (p == 0 && scash_alloc(total * sizeof(double), dist, (void**)&region[0]) != SCASH_OK)
                MPI_Abort(MPI_COMM_WORLD, 1);
            region[p] = region[0] + group[p];
        } else if (scash_alloc(bytes, dist, (void**)&region[p]) != SCASH_OK)
            MPI_Abort(MPI_COMM_WORLD, 1);
        if (hand && scash_set_home(region[p], bytes, p) != SCASH_OK)
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int J = 0; J < nb; ++J)
        for (int I = 0; I < nb; ++I)
            BLK(m, I, J) = region[owner(I, J)] + offset[I + (size_t)J * nb];
    double fill_start = MPI_Wtime();
    fill(m, me);
    scash_barrier();

    scash_stats_t before, after;
    scash_stats_local(&before);
    double t0 = MPI_Wtime(), c0 = cpu_seconds();
    factor(m, me, scash_barrier);
    scash_barrier();
    double seconds = MPI_Wtime() - t0, cpu = cpu_seconds() - c0, cpu_total = 0;
    scash_stats_local(&after);
    if (verbose)
        fprintf(stderr,
            "lu: process %d: fill %.4f s; timed part: cpu=%.3f s read_faults=%llu write_faults=%llu messages=%llu "
            "pages_fetched=%llu invalidations=%llu\n",
            me, t0 - fill_start, cpu, (unsigned long long)(after.read_faults - before.read_faults),
            (unsigned long long)(after.write_faults - before.write_faults),
            (unsigned long long)(after.messages - before.messages),
            (unsigned long long)(after.pages_fetched - before.pages_fetched),
            (unsigned long long)(after.invalidations - before.invalidations));
    MPI_Reduce(&cpu, &cpu_total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);

    scash_stats_t s;
    scash_stats_total(&s);
    int status = 0;
    if (me == 0) {
        printf("lu: n=%d B=%d P=%d layout=%s homes=%s%s time=%.3f s cpu=%.3f s\n", n, bs, np,
            one_region ? "one" : "owner", dist_name, migrate ? "+dynamic" : "+static", seconds, cpu_total);
        if (!quiet)
            printf("lu: stats: messages=%llu bytes=%llu pages_fetched=%llu diffs=%llu diff_bytes=%llu home_moves=%llu "
                   "barriers=%llu\n",
                (unsigned long long)s.messages, (unsigned long long)s.bytes, (unsigned long long)s.pages_fetched,
                (unsigned long long)s.diffs_sent, (unsigned long long)s.diff_bytes, (unsigned long long)s.home_moves,
                (unsigned long long)s.barriers / np);
        if (check) {
            /* The same blocks in private memory, factored by one process:
             * a 1 x 1 process grid makes process 0 the owner of all. */
            double* seq = calloc(total, sizeof(double));
            double** sm = malloc(sizeof(double*) * nb * nb);
            for (int J = 0; J < nb; ++J)
                for (int I = 0; I < nb; ++I)
                    BLK(sm, I, J) = seq + group[owner(I, J)] + offset[I + (size_t)J * nb];
            int saved_rows = grid_rows, saved_cols = grid_cols;
            grid_rows = grid_cols = 1;
            fill(sm, -1);
            factor(sm, 0, no_sync);
            grid_rows = saved_rows;
            grid_cols = saved_cols;
            size_t diff = 0;
            for (size_t b = 0; b < (size_t)nb * nb; ++b)
                for (size_t i = 0; i < block_doubles; ++i)
                    diff += memcmp(&sm[b][i], &m[b][i], sizeof(double)) != 0;
            printf("lu: check: %s (%zu of %zu values differ from the sequential run)\n",
                diff ? "DIFFERENT" : "bitwise equal to the sequential run", diff, (size_t)n * n);
            status = diff != 0;
            free(sm);
            free(seq);
        }
    }
    if (me == 0 && out_file) {
        /* Through a private buffer: shared pages must not reach a system call. */
        FILE* f = fopen(out_file, "wb");
        double* buf = malloc(block_doubles * sizeof(double));
        for (size_t b = 0; f && buf && b < (size_t)nb * nb; ++b) {
            memcpy(buf, m[b], block_doubles * sizeof(double));
            if (fwrite(buf, sizeof(double), block_doubles, f) != block_doubles)
                break;
        }
        if (!f || !buf || ferror(f) | fclose(f)) {
            fprintf(stderr, "lu: writing %s failed\n", out_file);
            status = 1;
        }
        free(buf);
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int p = np - 1; p >= 0; --p)
        if (!one_region || p == 0)
            scash_free(region[p]);
    free(region);
    free(group);
    free(offset);
    free(m);
    scash_finalize();
    MPI_Finalize();
    return status;
}
