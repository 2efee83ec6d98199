/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wan-kernels.c - the communication of four NPB kernels, written here from
 * their descriptions (NAS Parallel Benchmarks 2.x), with a compute phase
 * between steps: every step all ranks go idle for --compute-ms and then
 * send at once, the bursts that overflow a congested WAN's queue.
 *
 *   mpiexec ... ./wan-kernels KERNEL [--sizes LIST] [--quick] [--warmup N]
 *                             [--reps N] [--compute-ms MS]
 *   (or WAN_KERNELS_COMPUTE_MS in the environment; default 20 ms)
 *
 *   is  bucket exchange: an MPI_Alltoall of the counts, then MPI_Alltoallv
 *       of uneven buckets (1/2 to 3/2 of SIZE/P per destination)
 *   ft  transpose: MPI_Alltoall of SIZE bytes per rank (SIZE/P to each)
 *   cg  a pairwise exchange of SIZE bytes with the rank P/2 away (across
 *       the clusters), then two 8-byte MPI_Allreduce (the dot products)
 *   mg  halo exchange of SIZE bytes with both ring neighbours, then one
 *       8-byte MPI_Allreduce (the residual norm)
 *
 * Timing: each step starts after a barrier of point-to-point messages and
 * the compute phase (not timed); each rank times the communication. A
 * step lasts as long as its slowest rank's communication (the next step
 * waits for that rank). The reported time is the mean step, the steps'
 * total over their number, as an NPB run reports its total: a
 * retransmission timeout that stalls one step in ten counts there, and a
 * median would hide it, which is what pacing is for. The median step
 * follows in the FASTEST_S column. Output (rank 0), as
 * bench/coll/hashi-coll-bench.c, so run-coll's job runner reads it:
 * KERNEL SIZE WARMUP REPS MEAN_S MEDIAN_S CHECK; '#' comments; "# end"
 * before MPI_Finalize.
 */
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAX_SIZES = 32, TAG_SYNC = 9100, TAG_DATA = 9101 };
static const char* const kernels[] = {"is", "ft", "cg", "mg"};

static int rank, nranks;

static void die(const char* msg)
{
    if (rank == 0)
        fprintf(stderr, "wan-kernels: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

static long long parse_size(const char* s)
{
    char* end;
    long long v = strtoll(s, &end, 10);
    if (end == s || v <= 0)
        die("a size is a whole number with an optional K or M suffix, e.g. 64K");
    if (*end == 'K' || *end == 'k')
        v <<= 10, ++end;
    else if (*end == 'M' || *end == 'm')
        v <<= 20, ++end;
    if (*end != '\0' || v > (1LL << 28))
        die("sizes go up to 256M, as 4096, 64K or 4M");
    return v;
}

/* A barrier of point-to-point messages through rank 0, the same for every
 * variant whatever MPI_Barrier would run. */
static void sync_ranks(void)
{
    char b = 0;
    if (rank == 0) {
        for (int r = 1; r < nranks; ++r)
            MPI_Recv(&b, 1, MPI_CHAR, r, TAG_SYNC, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int r = 1; r < nranks; ++r)
            MPI_Send(&b, 1, MPI_CHAR, r, TAG_SYNC, MPI_COMM_WORLD);
    } else {
        MPI_Send(&b, 1, MPI_CHAR, 0, TAG_SYNC, MPI_COMM_WORLD);
        MPI_Recv(&b, 1, MPI_CHAR, 0, TAG_SYNC, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

static unsigned char pattern(int src, long long i)
{
    return (unsigned char)(src * 31 + i * 7);
}

struct bufs {
    unsigned char *out, *in;
    int *scount, *sdispl, *rcount, *rdispl;
};

/* One step of `kernel`; returns 0, or the source rank + 1 of a wrong byte. */
static int step(int kernel, long long size, struct bufs* b)
{
    double dot = rank, sum = 0;
    const int per = (int)(size / nranks);
    switch (kernel) {
    case 0: /* is */
        for (int d = 0; d < nranks; ++d)
            b->scount[d] = per / 2 + (int)((long long)per * ((rank + d) % 3) / 2);
        MPI_Alltoall(b->scount, 1, MPI_INT, b->rcount, 1, MPI_INT, MPI_COMM_WORLD);
        for (int d = 0, so = 0, ro = 0; d < nranks; ++d) {
            b->sdispl[d] = so, so += b->scount[d];
            b->rdispl[d] = ro, ro += b->rcount[d];
            for (int i = 0; i < b->scount[d]; ++i)
                b->out[b->sdispl[d] + i] = pattern(rank, i);
        }
        MPI_Alltoallv(b->out, b->scount, b->sdispl, MPI_BYTE, b->in, b->rcount, b->rdispl, MPI_BYTE, MPI_COMM_WORLD);
        for (int s = 0; s < nranks; ++s)
            if (b->rcount[s] > 0 && b->in[b->rdispl[s] + b->rcount[s] - 1] != pattern(s, b->rcount[s] - 1))
                return s + 1;
        return 0;
    case 1: /* ft */
        for (int d = 0; d < nranks; ++d)
            memset(b->out + (long long)d * per, pattern(rank, d), per);
        MPI_Alltoall(b->out, per, MPI_BYTE, b->in, per, MPI_BYTE, MPI_COMM_WORLD);
        for (int s = 0; s < nranks; ++s)
            if (per > 0 && b->in[(long long)s * per + per - 1] != pattern(s, rank))
                return s + 1;
        return 0;
    case 2: { /* cg */
        const int partner = (rank + nranks / 2) % nranks;
        memset(b->out, pattern(rank, 0), size);
        MPI_Sendrecv(b->out, (int)size, MPI_BYTE, partner, TAG_DATA, b->in, (int)size, MPI_BYTE, partner, TAG_DATA,
            MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Allreduce(&dot, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Allreduce(&dot, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        return b->in[size - 1] != pattern(partner, 0) ? partner + 1 : 0;
    }
    default: { /* mg */
        const int left = (rank + nranks - 1) % nranks, right = (rank + 1) % nranks;
        memset(b->out, pattern(rank, 0), size);
        MPI_Request rq[4];
        MPI_Irecv(b->in, (int)size, MPI_BYTE, left, TAG_DATA, MPI_COMM_WORLD, &rq[0]);
        MPI_Irecv(b->in + size, (int)size, MPI_BYTE, right, TAG_DATA, MPI_COMM_WORLD, &rq[1]);
        MPI_Isend(b->out, (int)size, MPI_BYTE, right, TAG_DATA, MPI_COMM_WORLD, &rq[2]);
        MPI_Isend(b->out, (int)size, MPI_BYTE, left, TAG_DATA, MPI_COMM_WORLD, &rq[3]);
        MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
        MPI_Allreduce(&dot, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (b->in[size - 1] != pattern(left, 0))
            return left + 1;
        return b->in[2 * size - 1] != pattern(right, 0) ? right + 1 : 0;
    }
    }
}

static int cmp_double(const void* a, const void* b)
{
    const double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc < 2)
        die("usage: wan-kernels is|ft|cg|mg [--sizes LIST] [--quick] [--warmup N] [--reps N] [--compute-ms MS]");
    int kernel = -1;
    for (int k = 0; k < 4; ++k)
        if (strcmp(argv[1], kernels[k]) == 0)
            kernel = k;
    if (kernel < 0)
        die("the kernel is one of is, ft, cg, mg");
    const char* sizes_text = "64K,1M,4M";
    long warmup = 2, reps = 10, compute_ms = 20;
    /* run-wan passes the compute phase through the job's environment. */
    if (getenv("WAN_KERNELS_COMPUTE_MS") != NULL)
        compute_ms = atol(getenv("WAN_KERNELS_COMPUTE_MS"));
    for (int i = 2; i < argc; ++i) {
        if (strcmp(argv[i], "--quick") == 0) {
            warmup = 1, reps = 5;
        } else if (i + 1 < argc && strcmp(argv[i], "--sizes") == 0) {
            sizes_text = argv[++i];
        } else if (i + 1 < argc && strcmp(argv[i], "--warmup") == 0) {
            warmup = atol(argv[++i]);
        } else if (i + 1 < argc && strcmp(argv[i], "--reps") == 0) {
            reps = atol(argv[++i]);
        } else if (i + 1 < argc && strcmp(argv[i], "--compute-ms") == 0) {
            compute_ms = atol(argv[++i]);
        } else {
            die("unknown option (see the comment at the top of wan-kernels.c)");
        }
    }
    if (reps < 1 || reps > 10000 || warmup < 0 || compute_ms < 0 || compute_ms > 10000)
        die("--reps 1 to 10000, --warmup and --compute-ms (up to 10000) at least 0");
    long long sizes[MAX_SIZES];
    int nsizes = 0;
    char* copy = strdup(sizes_text);
    for (char* t = strtok(copy, ","); t != NULL && nsizes < MAX_SIZES; t = strtok(NULL, ","))
        sizes[nsizes++] = parse_size(t);
    free(copy);
    long long biggest = 0;
    for (int i = 0; i < nsizes; ++i)
        biggest = sizes[i] > biggest ? sizes[i] : biggest;
    struct bufs b;
    b.out = malloc(2 * biggest + 64);
    b.in = malloc(2 * biggest + 64);
    b.scount = malloc(4 * sizeof(int) * nranks);
    b.sdispl = b.scount + nranks, b.rcount = b.sdispl + nranks, b.rdispl = b.rcount + nranks;
    double* times = malloc(sizeof(double) * reps);
    double* slowest = malloc(sizeof(double) * reps); /* each step's, over the ranks (rank 0) */
    if (rank == 0)
        printf("# wan-kernels %s: %d ranks, compute phase %ld ms between steps\n", kernels[kernel], nranks, compute_ms);
    const struct timespec idle = {compute_ms / 1000, (compute_ms % 1000) * 1000000L};
    for (int s = 0; s < nsizes; ++s) {
        int wrong = 0;
        for (long r = -warmup; r < reps; ++r) {
            sync_ranks();
            nanosleep(&idle, NULL); /* the compute phase: the connections go idle */
            const double t0 = MPI_Wtime();
            const int w = step(kernel, sizes[s], &b);
            const double t = MPI_Wtime() - t0;
            if (r >= 0)
                times[r] = t;
            wrong = wrong ? wrong : w;
        }
        MPI_Reduce(times, slowest, (int)reps, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        double worst[2] = {0, 0}; /* the mean step, the median step */
        if (rank == 0) {
            for (long r = 0; r < reps; ++r)
                worst[0] += slowest[r];
            worst[0] /= (double)reps;
            qsort(slowest, reps, sizeof *slowest, cmp_double);
            worst[1] = slowest[reps / 2];
        }
        int any_wrong = 0;
        MPI_Reduce(&wrong, &any_wrong, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            if (any_wrong)
                printf("%s %lld %ld %ld %.6f %.6f WRONG:from_rank=%d\n", kernels[kernel], sizes[s], warmup, reps,
                    worst[0], worst[1], any_wrong - 1);
            else
                printf("%s %lld %ld %ld %.6f %.6f ok\n", kernels[kernel], sizes[s], warmup, reps, worst[0], worst[1]);
            fflush(stdout);
        }
    }
    if (rank == 0) {
        printf("# end\n");
        fflush(stdout);
    }
    free(times);
    free(slowest);
    free(b.scount);
    free(b.in);
    free(b.out);
    MPI_Finalize();
    return 0;
}
