/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * barrier-skew.c - what MPI_Barrier leaves behind: the third-party way of
 * timing a bcast (OSU's osu_bcast: MPI_Bcast timed alone, an MPI_Barrier
 * between calls), and the barrier's own release times. Run by
 * bench/coll/run-barrier-skew once with MPICH's barrier and once with
 * Hashi's, the bcast being MPICH's in both.
 *
 *   mpiexec ... ./barrier-skew barrier [--sizes LIST] [--quick] [--warmup N] [--reps N]
 *
 * Every repetition: t0 = MPI_Wtime(); MPI_Bcast(SIZE bytes from rank 0);
 * t1; MPI_Barrier; t2. A rank's bcast time is the mean of t1 - t0 over the
 * repetitions, and the figure a third-party benchmark prints is the mean of
 * that over the ranks. A barrier that releases ranks unevenly makes the
 * early ones wait inside the next bcast for data that the root, released
 * late, has not sent yet: the bcast looks slower though it is the same.
 *
 * The barrier's release: per repetition, entry (t1) and exit (t2) of every
 * rank, gathered at the end. The namespaces of the testbed share one clock
 * (MPI_Wtime of all ranks on one host), which is what makes entry and exit
 * times of different ranks comparable; on hosts with separate clocks the
 * skew figures mean nothing and the program says so when
 * MPI_WTIME_IS_GLOBAL is not set and the ranks are on several hosts.
 *   skew       max over ranks of exit - min over ranks of exit
 *   release    max exit - max entry (the last rank's release after the last arrival)
 *   first      min exit - max entry (how soon the first rank goes after the last arrival)
 *
 * Output (stdout of rank 0), one line per size, run-coll's row format:
 *   barrier SIZE WARMUP REPS MEAN_BCAST_S MAX_BCAST_S CHECK
 * (MEAN_BCAST_S: the third-party figure; MAX_BCAST_S: the slowest rank's
 * mean), and before it a comment line
 *   # skew SIZE skew_ms=MEDIAN release_ms=MEDIAN first_ms=MEDIAN per-cluster-exit-ms=C0,C1,...
 * (medians over the repetitions; per cluster: the median of the cluster's
 * last exit minus the last entry). Cluster of a rank: HASHI_CLUSTER_ID
 * (Hashi's mpiexec sets it), else 0.
 */
#include <mpi.h>

#include "median.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_SIZES = 16, MAX_CLUSTERS = 16 };

struct options {
    long long sizes[MAX_SIZES];
    int nsizes;
    long warmup;
    long reps;
};

static int fail(int rank, const char* msg)
{
    if (rank == 0)
        fprintf(stderr, "barrier-skew: %s\n", msg);
    return 2;
}

static int parse_size(const char* text, long long* out)
{
    char* end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text)
        return -1;
    if (*end == 'K' || *end == 'k')
        v <<= 10, end++;
    else if (*end == 'M' || *end == 'm')
        v <<= 20, end++;
    if (*end || v < 1 || v > (1LL << 28))
        return -1;
    *out = v;
    return 0;
}

static int parse_args(int argc, char** argv, int rank, struct options* o)
{
    o->nsizes = 1;
    o->sizes[0] = 4096;
    o->warmup = 10;
    o->reps = 100;
    if (argc < 2 || strcmp(argv[1], "barrier") != 0)
        return fail(rank, "usage: barrier-skew barrier [--sizes LIST] [--quick] [--warmup N] [--reps N]");
    for (int i = 2; i < argc; i++) {
        const char* a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quick")) {
            o->warmup = 5;
            o->reps = 30;
        } else if (!strcmp(a, "--sizes") && v) {
            char buf[512];
            snprintf(buf, sizeof buf, "%s", v);
            o->nsizes = 0;
            for (char* s = strtok(buf, ","); s; s = strtok(NULL, ",")) {
                if (o->nsizes == MAX_SIZES || parse_size(s, &o->sizes[o->nsizes]) != 0)
                    return fail(rank, "--sizes takes up to 16 sizes of 1 byte to 256M (K/M suffixes)");
                o->nsizes++;
            }
            i++;
        } else if ((!strcmp(a, "--warmup") || !strcmp(a, "--reps")) && v) {
            char* end = NULL;
            long n = strtol(v, &end, 10);
            if (*end || n < (a[2] == 'r') || n > 100000)
                return fail(rank, "--warmup takes 0 to 100000, --reps 1 to 100000");
            *(a[2] == 'r' ? &o->reps : &o->warmup) = n;
            i++;
        } else {
            char msg[256];
            snprintf(msg, sizeof msg, "unknown or incomplete argument '%s'", a);
            return fail(rank, msg);
        }
    }
    return 0;
}

/* One size: warm-ups and repetitions; rank 0 prints the comment and row. */
static int measure(long long size, const struct options* o, int rank, int ranks, int cluster, char* buf)
{
    const long n = o->reps;
    double* entry = malloc(sizeof(double) * (size_t)n);
    double* exit_ = malloc(sizeof(double) * (size_t)n);
    if (!entry || !exit_) {
        fprintf(stderr, "barrier-skew: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double bcast_sum = 0;
    int bad = 0;
    for (long i = -o->warmup; i < n; i++) {
        if (rank != 0)
            memset(buf, 0xee, (size_t)size);
        const double t0 = MPI_Wtime();
        MPI_Bcast(buf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD);
        const double t1 = MPI_Wtime();
        MPI_Barrier(MPI_COMM_WORLD);
        const double t2 = MPI_Wtime();
        for (long long b = 0; b < size && !bad; b += 509)
            bad = (unsigned char)buf[b] != (unsigned char)(b * 7 + 3);
        if (i >= 0) {
            bcast_sum += t1 - t0;
            entry[i] = t1;
            exit_[i] = t2;
        }
    }
    const double my_mean = bcast_sum / (double)n;
    double sum_mean = 0, max_mean = 0;
    int any_bad = 0;
    MPI_Reduce(&my_mean, &sum_mean, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&my_mean, &max_mean, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);

    double* all_entry = NULL;
    double* all_exit = NULL;
    int* clusters = NULL;
    if (rank == 0) {
        all_entry = malloc(sizeof(double) * (size_t)n * (size_t)ranks);
        all_exit = malloc(sizeof(double) * (size_t)n * (size_t)ranks);
        clusters = malloc(sizeof(int) * (size_t)ranks);
        if (!all_entry || !all_exit || !clusters) {
            fprintf(stderr, "barrier-skew: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Gather(entry, (int)n, MPI_DOUBLE, all_entry, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Gather(exit_, (int)n, MPI_DOUBLE, all_exit, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Gather(&cluster, 1, MPI_INT, clusters, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        double* skew = malloc(sizeof(double) * (size_t)n);
        double* release = malloc(sizeof(double) * (size_t)n);
        double* first = malloc(sizeof(double) * (size_t)n);
        double* per_cluster = malloc(sizeof(double) * (size_t)n * MAX_CLUSTERS);
        int nclusters = 1;
        for (int r = 0; r < ranks; r++)
            if (clusters[r] + 1 > nclusters)
                nclusters = clusters[r] + 1;
        for (long i = 0; i < n; i++) {
            double last_in = all_entry[i], first_out = all_exit[i], last_out = all_exit[i];
            double cluster_out[MAX_CLUSTERS];
            for (int c = 0; c < MAX_CLUSTERS; c++)
                cluster_out[c] = 0;
            for (int r = 0; r < ranks; r++) {
                const double in = all_entry[(size_t)r * (size_t)n + (size_t)i];
                const double out = all_exit[(size_t)r * (size_t)n + (size_t)i];
                last_in = in > last_in ? in : last_in;
                first_out = out < first_out ? out : first_out;
                last_out = out > last_out ? out : last_out;
                if (out > cluster_out[clusters[r]])
                    cluster_out[clusters[r]] = out;
            }
            skew[i] = last_out - first_out;
            release[i] = last_out - last_in;
            first[i] = first_out - last_in;
            for (int c = 0; c < nclusters; c++)
                per_cluster[(size_t)c * (size_t)n + (size_t)i] = cluster_out[c] - last_in;
        }
        printf("# skew %lld skew_ms=%.3f release_ms=%.3f first_ms=%.3f per-cluster-exit-ms=", size,
            median(skew, n) * 1e3, median(release, n) * 1e3, median(first, n) * 1e3);
        for (int c = 0; c < nclusters; c++)
            printf("%s%.3f", c ? "," : "", median(per_cluster + (size_t)c * (size_t)n, n) * 1e3);
        printf("\nbarrier %lld %ld %ld %.9f %.9f %s\n", size, o->warmup, n, sum_mean / ranks, max_mean,
            any_bad ? "WRONG" : "ok");
        fflush(stdout);
        free(skew);
        free(release);
        free(first);
        free(per_cluster);
        free(all_entry);
        free(all_exit);
        free(clusters);
    }
    free(entry);
    free(exit_);
    return 0;
}

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    struct options o;
    if (parse_args(argc, argv, rank, &o) != 0) {
        MPI_Finalize();
        return 2;
    }
    const char* cid = getenv("HASHI_CLUSTER_ID");
    int cluster = cid ? atoi(cid) : 0;
    if (cluster < 0 || cluster >= MAX_CLUSTERS)
        cluster = 0;
    int global = 0, flag = 0;
    int* attr = NULL;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &attr, &flag);
    global = flag && attr && *attr;
    long long largest = 0;
    for (int s = 0; s < o.nsizes; s++)
        largest = o.sizes[s] > largest ? o.sizes[s] : largest;
    char* buf = malloc((size_t)largest);
    if (!buf) {
        fprintf(stderr, "barrier-skew: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (long long b = 0; b < largest; b++)
        buf[b] = (char)(b * 7 + 3);
    if (rank == 0) {
        printf("# barrier-skew on %d ranks: MPI_Bcast of SIZE bytes from rank 0 timed alone, MPI_Barrier between\n",
            ranks);
        printf("# MPI_WTIME_IS_GLOBAL=%d (the skew figures compare clocks of different ranks: valid on one host)\n",
            global);
        fflush(stdout);
    }
    for (int s = 0; s < o.nsizes; s++)
        measure(o.sizes[s], &o, rank, ranks, cluster, buf);
    if (rank == 0) {
        printf("# end\n");
        fflush(stdout);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
