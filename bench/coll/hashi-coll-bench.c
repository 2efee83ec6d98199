/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hashi-coll-bench.c - times one collective over MPI_COMM_WORLD at a list
 * of sizes. bench/coll/run-coll runs it once per algorithm variant (MPICH's
 * own, Hashi's automatic choice, each Hashi algorithm forced through
 * HASHI_COLL_*) and compares them.
 *
 *   mpiexec ... ./hashi-coll-bench COLLECTIVE [--sizes LIST] [--quick]
 *                                  [--warmup N] [--reps N] [--root R] [--no-check]
 *
 * What a size means:
 *   bcast      bytes of the message (MPI_BYTE), from --root (default 0)
 *   allreduce  bytes of the vector (MPI_DOUBLE, MPI_SUM)
 *   allgather  bytes each rank contributes (MPI_BYTE); each receives P times that
 *   alltoall   bytes each rank sends in all (MPI_BYTE), SIZE/P to every rank
 *   ibcast, iallreduce  as bcast and allreduce, started with MPI_Ibcast or
 *              MPI_Iallreduce and completed with MPI_Wait
 *
 * Timing: before every call the ranks meet in a barrier made of
 * point-to-point messages (so every variant is synchronised the same way,
 * whatever MPI_Barrier would run); each rank times its call from the
 * barrier's exit to the call's return. The reported time is the largest,
 * over the ranks, of each rank's median over the repetitions. Warm-up calls
 * come first and are not timed. The last repetition's result is checked
 * (its output buffer filled with garbage before it).
 *
 * Output (stdout of rank 0), one line per size, whitespace separated:
 *   COLLECTIVE SIZE_BYTES WARMUP REPS TIME_S FASTEST_S CHECK
 * FASTEST_S is the largest over the ranks of each rank's fastest call;
 * CHECK is "ok" or "WRONG:rank=R,index=I,got=X,want=Y". Lines starting
 * with '#' are comments; "# end" comes when all is measured, before
 * MPI_Finalize.
 */
#include <mpi.h>

#include "median.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char** environ;

enum coll { BCAST, ALLREDUCE, ALLGATHER, ALLTOALL, IBCAST, IALLREDUCE, NCOLL };

static const char* const coll_names[NCOLL] = {"bcast", "allreduce", "allgather", "alltoall", "ibcast", "iallreduce"};
static const char* const size_meaning[NCOLL] = {
    "bytes of the message (MPI_BYTE)",
    "bytes of the vector (MPI_DOUBLE, MPI_SUM)",
    "bytes each rank contributes (MPI_BYTE; each rank receives ranks x size)",
    "bytes each rank sends in all (MPI_BYTE; size/ranks to every rank)",
    "bytes of the message (MPI_BYTE; MPI_Ibcast, then MPI_Wait)",
    "bytes of the vector (MPI_DOUBLE, MPI_SUM; MPI_Iallreduce, then MPI_Wait)",
};

/* Buffers, data and checks of a nonblocking form are its blocking form's. */
static enum coll blocking_form(enum coll c)
{
    return c == IBCAST ? BCAST : c == IALLREDUCE ? ALLREDUCE : c;
}

/* 1 KiB to 64 MiB in powers of 4, with 32 MiB for the targets of issue 5. */
static const char* const default_sizes = "1K,4K,16K,64K,256K,1M,4M,16M,32M,64M";
static const char* const quick_sizes = "1K,16K,256K,4M";

enum { MAX_SIZES = 64, TAG_BARRIER = 7000, TAG_RESULT = 7001, TAG_NODE = 7002 };
static const long long max_size = 1LL << 30;

struct options {
    enum coll coll;
    long long sizes[MAX_SIZES];
    int nsizes;
    int quick;
    long warmup; /* -1: by size */
    long reps; /* 0: by size */
    long root;
    int check;
};

static void usage(FILE* out)
{
    fprintf(out,
        "usage: hashi-coll-bench COLLECTIVE [--sizes LIST] [--quick] [--warmup N] [--reps N] [--root R] "
        "[--no-check]\n"
        "  COLLECTIVE    bcast, allreduce, allgather, alltoall, ibcast or iallreduce\n"
        "  --sizes LIST  comma-separated sizes in bytes, K/M/G suffixes allowed, 1 to 1G\n"
        "                (default %s; --quick: %s)\n"
        "  --quick       one warm-up call and 3 repetitions per size\n"
        "  --warmup N    untimed calls per size (default: 2 up to 64 KiB, then 1)\n"
        "  --reps N      timed calls per size (default: 15 up to 64 KiB, 7 up to 1 MiB, 5 up to 8 MiB, then 3)\n"
        "  --root R      root of bcast (default 0)\n"
        "  --no-check    do not check the last repetition's result\n"
        "sizes:\n",
        default_sizes, quick_sizes);
    for (int c = 0; c < NCOLL; c++)
        fprintf(out, "  %-10s %s\n", coll_names[c], size_meaning[c]);
}

/* Error messages go to `err`, which is NULL on every rank but 0 (all ranks
 * parse the same arguments; one message is enough). */
static void complain(FILE* err, const char* fmt, ...)
{
    if (!err)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("hashi-coll-bench: ", err);
    vfprintf(err, fmt, ap);
    fputc('\n', err);
    va_end(ap);
}

static int parse_long(FILE* err, const char* opt, const char* text, long min, long max, long* out)
{
    char* end = NULL;
    errno = 0;
    long v = text ? strtol(text, &end, 10) : 0;
    if (!text || errno || end == text || *end || v < min || v > max) {
        complain(err, "%s needs a whole number from %ld to %ld, got '%s'", opt, min, max, text ? text : "");
        return -1;
    }
    *out = v;
    return 0;
}

/* "1K,64M,1000" into o->sizes. */
static int parse_sizes(FILE* err, const char* text, struct options* o)
{
    o->nsizes = 0;
    const char* p = text;
    while (*p) {
        char* end = NULL;
        errno = 0;
        long long v = (*p >= '0' && *p <= '9') ? strtoll(p, &end, 10) : -1;
        if (v < 0 || errno) {
            complain(err, "--sizes: '%s' is not a list of sizes such as 1K,64K,1M", text);
            return -1;
        }
        long long scale = 1;
        if (*end == 'K' || *end == 'k')
            scale = 1LL << 10;
        else if (*end == 'M' || *end == 'm')
            scale = 1LL << 20;
        else if (*end == 'G' || *end == 'g')
            scale = 1LL << 30;
        if (scale != 1)
            end++;
        if ((*end != ',' && *end != '\0') || v < 1 || v > max_size / scale) {
            complain(err, "--sizes: each size must be 1 to 1G bytes (got '%.*s' in '%s')",
                (int)(strchr(p, ',') ? strchr(p, ',') - p : (long)strlen(p)), p, text);
            return -1;
        }
        if (o->nsizes == MAX_SIZES) {
            complain(err, "--sizes: at most %d sizes", MAX_SIZES);
            return -1;
        }
        o->sizes[o->nsizes++] = v * scale;
        p = *end ? end + 1 : end;
        if (*end && !*p) {
            complain(err, "--sizes: '%s' ends with a comma", text);
            return -1;
        }
    }
    if (o->nsizes == 0) {
        complain(err, "--sizes needs at least one size");
        return -1;
    }
    return 0;
}

/* Returns 0, 1 after --help, 2 on a usage error. Only rank 0 speaks. */
static int parse_options(int argc, char** argv, int rank, int nranks, struct options* o)
{
    FILE* err = rank == 0 ? stderr : NULL;
    int rc = 0;
    const char* sizes = NULL;
    memset(o, 0, sizeof *o);
    o->coll = NCOLL;
    o->warmup = -1;
    o->check = 1;
    for (int i = 1; i < argc && rc == 0; i++) {
        const char* a = argv[i];
        const char* next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            if (rank == 0)
                usage(stdout);
            rc = 1;
        } else if (!strcmp(a, "--quick")) {
            o->quick = 1;
        } else if (!strcmp(a, "--no-check")) {
            o->check = 0;
        } else if (!strcmp(a, "--sizes")) {
            if (!next) {
                complain(err, "--sizes needs a list such as 1K,64K,1M");
                rc = 2;
            }
            sizes = next, i++;
        } else if (!strcmp(a, "--warmup")) {
            rc = parse_long(err, a, next, 0, 1000, &o->warmup) ? 2 : 0, i++;
        } else if (!strcmp(a, "--reps")) {
            rc = parse_long(err, a, next, 1, 100000, &o->reps) ? 2 : 0, i++;
        } else if (!strcmp(a, "--root")) {
            rc = parse_long(err, a, next, 0, nranks - 1, &o->root) ? 2 : 0, i++;
        } else if (a[0] == '-') {
            complain(err, "unknown option '%s' (see --help)", a);
            rc = 2;
        } else if (o->coll != NCOLL) {
            complain(err, "one collective per run, got '%s' after '%s'", a, coll_names[o->coll]);
            rc = 2;
        } else {
            for (int c = 0; c < NCOLL; c++) {
                if (!strcmp(a, coll_names[c]))
                    o->coll = (enum coll)c;
            }
            if (o->coll == NCOLL) {
                complain(err, "unknown collective '%s' (bcast, allreduce, allgather, alltoall, ibcast, iallreduce)", a);
                rc = 2;
            }
        }
    }
    if (rc == 0 && o->coll == NCOLL) {
        complain(err, "name a collective: bcast, allreduce, allgather, alltoall, ibcast or iallreduce");
        rc = 2;
    }
    if (rc == 0 && parse_sizes(err, sizes ? sizes : o->quick ? quick_sizes : default_sizes, o))
        rc = 2;
    if (rc == 2 && err)
        usage(err);
    return rc;
}

/* ---- sizes, buffers and the expected data ---------------------------- */

struct layout {
    int count; /* elements per call argument (per rank for allgather/alltoall) */
    long long bytes; /* the size as reported: see size_meaning */
    size_t send_bytes; /* buffer sizes */
    size_t recv_bytes;
};

static struct layout layout_of(enum coll c, long long size, int nranks)
{
    struct layout l = {0, 0, 0, 0};
    switch (blocking_form(c)) {
    case BCAST:
        l.count = (int)size;
        l.bytes = size;
        l.recv_bytes = (size_t)size; /* bcast has one buffer: recv */
        break;
    case ALLREDUCE:
        l.count = size >= (long long)sizeof(double) ? (int)(size / (long long)sizeof(double)) : 1;
        l.bytes = (long long)l.count * (long long)sizeof(double);
        l.send_bytes = l.recv_bytes = (size_t)l.bytes;
        break;
    case ALLGATHER:
        l.count = (int)size;
        l.bytes = size;
        l.send_bytes = (size_t)size;
        l.recv_bytes = (size_t)size * (size_t)nranks;
        break;
    case ALLTOALL:
        l.count = size >= nranks ? (int)(size / nranks) : 1;
        l.bytes = (long long)l.count * nranks;
        l.send_bytes = l.recv_bytes = (size_t)l.bytes;
        break;
    case IBCAST: /* blocking_form() maps these away */
    case IALLREDUCE:
    case NCOLL:
        break;
    }
    return l;
}

/* Byte i of what rank `from` sends to rank `to` at size number `seed`. The
 * i >> 8 term makes a block shifted by a multiple of 256 bytes differ. */
static unsigned char pattern(int from, int to, size_t i, int seed)
{
    return (unsigned char)(i * 131u + (i >> 8) * 17u + (unsigned)from * 29u + (unsigned)to * 7u + (unsigned)seed * 53u +
        1u);
}

/* allreduce: element i of rank r is (i + seed) % 1024 + r + 1, so the sum
 * over P ranks is exact in a double. */
static double summand(int rank, size_t i, int seed)
{
    return (double)((i + (size_t)seed) % 1024 + (size_t)rank + 1);
}

static void fill_send(
    enum coll c, const struct layout* l, void* send, void* recv, int rank, int nranks, int root, int seed)
{
    size_t n = (size_t)l->count;
    switch (blocking_form(c)) {
    case BCAST:
        if (rank == root) {
            unsigned char* b = recv;
            for (size_t i = 0; i < n; i++)
                b[i] = pattern(root, 0, i, seed);
        }
        break;
    case ALLREDUCE: {
        double* d = send;
        for (size_t i = 0; i < n; i++)
            d[i] = summand(rank, i, seed);
        break;
    }
    case ALLGATHER: {
        unsigned char* b = send;
        for (size_t i = 0; i < n; i++)
            b[i] = pattern(rank, 0, i, seed);
        break;
    }
    case ALLTOALL: {
        unsigned char* b = send;
        for (int to = 0; to < nranks; to++) {
            for (size_t i = 0; i < n; i++)
                b[(size_t)to * n + i] = pattern(rank, to, i, seed);
        }
        break;
    }
    case IBCAST: /* blocking_form() maps these away */
    case IALLREDUCE:
    case NCOLL:
        break;
    }
}

/* Garbage in the output buffer before the checked call: bytes of 0x5a,
 * which no pattern keeps for long and which make NaNs of doubles. */
static void poison(enum coll c, const struct layout* l, void* recv, int rank, int root)
{
    c = blocking_form(c);
    if (c == BCAST && rank == root)
        return;
    memset(recv, c == ALLREDUCE ? 0xff : 0x5a, l->recv_bytes);
}

struct mismatch {
    long long index; /* -1: none */
    double got, want;
};

static struct mismatch check(
    enum coll c, const struct layout* l, const void* recv, int rank, int nranks, int root, int seed)
{
    struct mismatch m = {-1, 0, 0};
    size_t n = (size_t)l->count;
    c = blocking_form(c);
    if (c == ALLREDUCE) {
        const double* d = recv;
        for (size_t i = 0; i < n; i++) {
            double want = 0;
            for (int r = 0; r < nranks; r++)
                want += summand(r, i, seed);
            if (d[i] != want) {
                m.index = (long long)i, m.got = d[i], m.want = want;
                return m;
            }
        }
        return m;
    }
    const unsigned char* b = recv;
    int blocks = c == BCAST ? 1 : nranks;
    for (int from = 0; from < blocks; from++) {
        for (size_t i = 0; i < n; i++) {
            unsigned char want = c == BCAST ? pattern(root, 0, i, seed)
                : c == ALLGATHER            ? pattern(from, 0, i, seed)
                                            : pattern(from, rank, i, seed);
            size_t at = (size_t)from * n + i;
            if (b[at] != want) {
                m.index = (long long)at, m.got = b[at], m.want = want;
                return m;
            }
        }
    }
    return m;
}

static void call(enum coll c, const struct layout* l, void* send, void* recv, int root)
{
    MPI_Request req = MPI_REQUEST_NULL;
    switch (c) {
    case BCAST:
        MPI_Bcast(recv, l->count, MPI_BYTE, root, MPI_COMM_WORLD);
        break;
    case ALLREDUCE:
        MPI_Allreduce(send, recv, l->count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        break;
    case ALLGATHER:
        MPI_Allgather(send, l->count, MPI_BYTE, recv, l->count, MPI_BYTE, MPI_COMM_WORLD);
        break;
    case ALLTOALL:
        MPI_Alltoall(send, l->count, MPI_BYTE, recv, l->count, MPI_BYTE, MPI_COMM_WORLD);
        break;
    case IBCAST:
        MPI_Ibcast(recv, l->count, MPI_BYTE, root, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        break;
    case IALLREDUCE:
        MPI_Iallreduce(send, recv, l->count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        break;
    case NCOLL:
        break;
    }
}

/* ---- synchronisation and results, over point-to-point only ----------- */

/* Dissemination barrier on the benchmark's own communicator: the same for
 * every variant (MPI_Barrier would itself be one of the things compared),
 * and it leaves the ranks within about one message latency of each other. */
static void p2p_barrier(MPI_Comm ctl, int rank, int nranks)
{
    for (int dist = 1; dist < nranks; dist *= 2) {
        MPI_Sendrecv(NULL, 0, MPI_BYTE, (rank + dist) % nranks, TAG_BARRIER, NULL, 0, MPI_BYTE,
            (rank - dist + nranks) % nranks, TAG_BARRIER, ctl, MPI_STATUS_IGNORE);
    }
}

static void default_counts(const struct options* o, long long size, long* warmup, long* reps)
{
    if (o->quick)
        *warmup = 1, *reps = 3;
    else if (size <= 64LL << 10)
        *warmup = 2, *reps = 15;
    else if (size <= 1LL << 20)
        *warmup = 1, *reps = 7;
    else if (size <= 8LL << 20)
        *warmup = 1, *reps = 5;
    else
        *warmup = 1, *reps = 3;
    if (o->warmup >= 0)
        *warmup = o->warmup;
    if (o->reps > 0)
        *reps = o->reps;
}

/* The header's description of where each rank runs: processor name and
 * the cluster id Hashi's mpiexec gave it, collected on rank 0. */
static void print_nodes(MPI_Comm ctl, int rank, int nranks)
{
    char mine[MPI_MAX_PROCESSOR_NAME + 32];
    char name[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    MPI_Get_processor_name(name, &len);
    const char* cluster = getenv("HASHI_CLUSTER_ID");
    snprintf(mine, sizeof mine, "%.*s@%s", len, name, cluster && *cluster ? cluster : "-");
    if (rank != 0) {
        MPI_Send(mine, (int)strlen(mine) + 1, MPI_CHAR, 0, TAG_NODE, ctl);
        return;
    }
    printf("# nodes (rank=host@cluster):");
    for (int r = 0; r < nranks; r++) {
        char other[sizeof mine];
        if (r == 0)
            memcpy(other, mine, sizeof mine);
        else
            MPI_Recv(other, (int)sizeof other, MPI_CHAR, r, TAG_NODE, ctl, MPI_STATUS_IGNORE);
        other[sizeof other - 1] = '\0';
        printf(" %d=%s", r, other);
    }
    printf("\n");
}

static void print_header(const struct options* o, int nranks)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    version[strcspn(version, "\n")] = '\0';
    printf("# hashi-coll-bench %s on %d ranks; size = %s\n", coll_names[o->coll], nranks, size_meaning[o->coll]);
    if (blocking_form(o->coll) == BCAST)
        printf("# root: %ld\n", o->root);
    printf("# library: %s\n", version);
    printf("# environment:");
    int any = 0;
    for (char** e = environ; *e; e++) {
        if (!strncmp(*e, "HASHI_COLL", 10) && strncmp(*e, "HASHI_COLL_PARAMS_SAVE=", 23)) {
            printf(" %s", *e);
            any = 1;
        }
    }
    printf("%s\n", any ? "" : " no HASHI_COLL variables");
    printf("# time: per rank the median over the repetitions of barrier exit to call return; the largest over ranks\n");
    printf("# columns: collective size_bytes warmup reps time_s fastest_s check\n");
}

static int run(const struct options* o, MPI_Comm ctl, int rank, int nranks)
{
    long long largest = 0;
    for (int s = 0; s < o->nsizes; s++)
        largest = o->sizes[s] > largest ? o->sizes[s] : largest;
    struct layout big = layout_of(o->coll, largest, nranks);
    /* Allocated once for the largest size and touched before any timing. */
    void* send = big.send_bytes ? malloc(big.send_bytes) : NULL;
    void* recv = malloc(big.recv_bytes);
    if ((big.send_bytes && !send) || !recv) {
        fprintf(stderr, "hashi-coll-bench: rank %d: cannot allocate %zu + %zu bytes for %s of %lld bytes\n", rank,
            big.send_bytes, big.recv_bytes, coll_names[o->coll], largest);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    if (send)
        memset(send, 0, big.send_bytes);
    memset(recv, 0, big.recv_bytes);

    int root = (int)o->root;
    for (int s = 0; s < o->nsizes; s++) {
        struct layout l = layout_of(o->coll, o->sizes[s], nranks);
        long warmup, reps;
        default_counts(o, l.bytes, &warmup, &reps);
        double* times = malloc((size_t)reps * sizeof *times);
        if (!times) {
            fprintf(stderr, "hashi-coll-bench: rank %d: out of memory\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        fill_send(o->coll, &l, send, recv, rank, nranks, root, s);
        for (long w = 0; w < warmup; w++) {
            p2p_barrier(ctl, rank, nranks);
            call(o->coll, &l, send, recv, root);
        }
        for (long r = 0; r < reps; r++) {
            if (o->check && r == reps - 1)
                poison(o->coll, &l, recv, rank, root);
            p2p_barrier(ctl, rank, nranks);
            double t0 = MPI_Wtime();
            call(o->coll, &l, send, recv, root);
            times[r] = MPI_Wtime() - t0;
        }
        struct mismatch m = {-1, 0, 0};
        if (o->check)
            m = check(o->coll, &l, recv, rank, nranks, root, s);
        /* median, fastest, mismatch index, got, want */
        double mine[5] = {0, 0, (double)m.index, m.got, m.want};
        mine[0] = median(times, reps);
        mine[1] = times[0]; /* sorted by median() */
        free(times);
        if (rank != 0) {
            MPI_Send(mine, 5, MPI_DOUBLE, 0, TAG_RESULT, ctl);
            continue;
        }
        double worst = mine[0], fastest = mine[1];
        char verdict[160] = "ok";
        for (int r = 0; r < nranks; r++) {
            double v[5];
            if (r == 0)
                memcpy(v, mine, sizeof v);
            else
                MPI_Recv(v, 5, MPI_DOUBLE, r, TAG_RESULT, ctl, MPI_STATUS_IGNORE);
            worst = v[0] > worst ? v[0] : worst;
            fastest = v[1] > fastest ? v[1] : fastest;
            if (v[2] >= 0 && !strcmp(verdict, "ok"))
                snprintf(verdict, sizeof verdict, "WRONG:rank=%d,index=%.0f,got=%g,want=%g", r, v[2], v[3], v[4]);
        }
        printf("%s %lld %ld %ld %.6f %.6f %s\n", coll_names[o->coll], l.bytes, warmup, reps, worst, fastest, verdict);
        fflush(stdout);
    }
    free(send);
    free(recv);
    return 0;
}

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, nranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    struct options o;
    int rc = parse_options(argc, argv, rank, nranks, &o);
    if (rc != 0) {
        MPI_Finalize();
        return rc == 1 ? 0 : 2;
    }
    if (o.coll == ALLGATHER) {
        /* The receive buffer is ranks x size: say so rather than fail in malloc. */
        for (int s = 0; s < o.nsizes; s++) {
            if (o.sizes[s] > INT_MAX || (unsigned long long)o.sizes[s] * (unsigned)nranks > (1ULL << 40)) {
                if (rank == 0)
                    fprintf(stderr, "hashi-coll-bench: allgather of %lld bytes on %d ranks is too large\n", o.sizes[s],
                        nranks);
                MPI_Finalize();
                return 2;
            }
        }
    }
    /* The benchmark's own traffic (barriers, results) stays off the
     * communicator the collectives are measured on. */
    MPI_Comm ctl;
    MPI_Comm_dup(MPI_COMM_WORLD, &ctl);
    if (rank == 0)
        print_header(&o, nranks);
    print_nodes(ctl, rank, nranks);
    fflush(stdout);
    run(&o, ctl, rank, nranks);
    p2p_barrier(ctl, rank, nranks);
    if (rank == 0) {
        printf("# end\n");
        fflush(stdout);
    }
    MPI_Comm_free(&ctl);
    MPI_Finalize();
    return 0;
}
