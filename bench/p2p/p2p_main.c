/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * p2p_main.c - hashi-p2p, point-to-point benchmarks between rank 0 and
 * rank 1: latency, unidirectional and bidirectional bandwidth, message rate.
 *
 *   mpiexec -n 2 ./hashi-p2p [--quick] [--max-size BYTES] [--window N]
 *                            [--iters N] [--batches N] BENCHMARK... (or "all")
 *
 * Output (stdout of rank 0), one line per message size, whitespace
 * separated, so a runner can parse it without knowing the benchmark:
 *   BENCHMARK SIZE_BYTES ITERATIONS VALUE UNIT
 * Lines starting with '#' are comments (library, nodes, columns); "# end"
 * comes when all is measured, before MPI_Finalize.
 * Ranks above 1 only wait; the two measured ranks should be on different
 * nodes, or MPICH measures its shared memory instead of the network.
 */
#include "p2p.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Values per message size and run: bytes are counted in 10^6 (as iperf3
 * and network links count), so that MB/s and Mbit/s differ by 8 only. */
static double latency_us(const struct p2p_params* p, size_t size, long iters, double seconds)
{
    (void)p, (void)size;
    return seconds * 1e6 / (2.0 * (double)iters);
}

static double stream_mbps(const struct p2p_params* p, size_t size, long iters, double seconds)
{
    return (double)size * p->window * (double)iters / seconds / 1e6;
}

static double exchange_mbps(const struct p2p_params* p, size_t size, long iters, double seconds)
{
    return 2.0 * stream_mbps(p, size, iters, seconds);
}

static double stream_kmsgs(const struct p2p_params* p, size_t size, long iters, double seconds)
{
    (void)size;
    return (double)p->window * (double)iters / seconds / 1e3;
}

enum { MiB = 1 << 20 };

static const struct p2p_benchmark benchmarks[] = {
    { "latency", "us", "one-way latency, half a blocking ping-pong round trip", p2p_pingpong, latency_us, 0, 4 * MiB,
        2000, 10 },
    { "bw", "MB/s", "unidirectional bandwidth, windows of non-blocking sends", p2p_stream, stream_mbps, 1, 4 * MiB, 100,
        5 },
    { "bibw", "MB/s", "bidirectional bandwidth (sum of both directions), windows both ways", p2p_exchange,
        exchange_mbps, 1, 4 * MiB, 100, 5 },
    { "msgrate", "kmsg/s", "message rate of small messages, windows of non-blocking sends", p2p_stream, stream_kmsgs, 1,
        4096, 200, 20 },
};
enum { NBENCH = sizeof benchmarks / sizeof benchmarks[0] };

struct options {
    int quick;
    long max_size; /* 0: the benchmark's own */
    long window;
    long iters; /* 0: the benchmark's own */
    long batches;
    int selected[NBENCH];
};

static void usage(FILE* out)
{
    fprintf(out,
        "usage: hashi-p2p [--quick] [--max-size BYTES] [--window N] [--iters N] [--batches N] BENCHMARK...\n"
        "  --quick           every third power of two, a tenth of the iterations (smoke runs)\n"
        "  --max-size BYTES  largest message (default 4 MiB; msgrate 4 KiB)\n"
        "  --window N        messages in flight per window, 1 to %d (default 64)\n"
        "  --iters N         iterations for messages up to 8 KiB (fewer for larger ones)\n"
        "  --batches N       split the iterations into N timed batches, report the fastest (default 3)\n"
        "benchmarks (or \"all\"):\n",
        P2P_MAX_WINDOW);
    for (int i = 0; i < NBENCH; i++)
        fprintf(out, "  %-8s %s, %s\n", benchmarks[i].name, benchmarks[i].unit, benchmarks[i].what);
}

static int parse_count(FILE* err, const char* opt, const char* text, long min, long max, long* out)
{
    char* end = NULL;
    errno = 0;
    long v = text ? strtol(text, &end, 10) : 0;
    if (!text || errno || *end || end == text || v < min || v > max) {
        if (err)
            fprintf(err, "hashi-p2p: %s needs a whole number from %ld to %ld, got '%s'\n", opt, min, max,
                text ? text : "");
        return -1;
    }
    *out = v;
    return 0;
}

/* The options that take a whole number. */
struct count_spec {
    const char* name;
    long min, max;
    long* out;
};

static const struct count_spec* count_option(const struct count_spec* specs, int n, const char* arg)
{
    for (int i = 0; i < n; i++) {
        if (!strcmp(specs[i].name, arg))
            return &specs[i];
    }
    return NULL;
}

/* Returns 0, or 1 after --help, or 2 on a usage error (message on stderr
 * of rank 0 only, since every rank parses the same arguments). */
static int parse_options(int argc, char** argv, int rank, struct options* o)
{
    FILE* err = rank == 0 ? stderr : NULL;
    int any = 0;
    memset(o, 0, sizeof *o);
    o->window = 64;
    o->batches = 3;
    const struct count_spec counts[] = {
        { "--max-size", 1, 1L << 30, &o->max_size },
        { "--window", 1, P2P_MAX_WINDOW, &o->window },
        { "--iters", 1, 100000000, &o->iters },
        { "--batches", 1, 100, &o->batches },
    };
    enum { NCOUNTS = sizeof counts / sizeof counts[0] };
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        const struct count_spec* c = NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            if (rank == 0)
                usage(stdout);
            return 1;
        } else if (!strcmp(a, "--quick")) {
            o->quick = 1;
        } else if ((c = count_option(counts, NCOUNTS, a))) {
            if (parse_count(err, a, i + 1 < argc ? argv[++i] : NULL, c->min, c->max, c->out) < 0)
                return 2;
        } else {
            int found = 0;
            for (int b = 0; b < NBENCH; b++) {
                if (!strcmp(a, "all") || !strcmp(a, benchmarks[b].name)) {
                    o->selected[b] = found = any = 1;
                }
            }
            if (!found) {
                if (err) {
                    fprintf(err, "hashi-p2p: unknown benchmark or option '%s'\n", a);
                    usage(err);
                }
                return 2;
            }
        }
    }
    if (!any) {
        if (err) {
            fprintf(err, "hashi-p2p: name at least one benchmark\n");
            usage(err);
        }
        return 2;
    }
    return 0;
}

/* Iterations shrink in proportion to the size beyond 8 KiB, so that every
 * size moves about the same number of bytes and a 4 MiB step does not take
 * minutes; a floor keeps a few samples even for the largest. */
static long iterations(const struct p2p_benchmark* bm, const struct options* o, size_t size)
{
    long base = o->iters ? o->iters : bm->base_iters;
    long floor = bm->min_iters;
    if (o->quick) {
        base = base / 10 > 0 ? base / 10 : 1;
        floor = 2;
    }
    long n = size <= 8192 ? base : (long)((double)base * 8192.0 / (double)size);
    return n > floor ? n : floor;
}

/* Warm-up: a tenth of the timed iterations, at least one, at most 100;
 * the first size of a run also pays for connection set-up, so it gets more. */
static long warmup(long iters, int first)
{
    long w = iters / 10;
    if (w < 1)
        w = 1;
    if (w > 100)
        w = 100;
    return first ? w + 10 : w;
}

static void node_name(char* name, int len)
{
    /* Hashi's mpiexec names the host it placed the rank on; with the exec
     * launcher all "hosts" are this machine, so the processor name would
     * not show that the ranks are on different nodes. */
    const char* env = getenv("HASHI_NODE_NAME");
    if (env) {
        snprintf(name, (size_t)len, "%s", env);
    } else {
        int n = 0;
        char host[MPI_MAX_PROCESSOR_NAME];
        MPI_Get_processor_name(host, &n);
        snprintf(name, (size_t)len, "%s", host);
    }
}

static void print_header(const struct p2p_params* p, long batches)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    char names[2][256];
    int len = 0;

    node_name(names[p->rank], (int)sizeof names[0]);
    if (p->rank == 1) {
        MPI_Send(names[1], (int)sizeof names[1], MPI_CHAR, 0, P2P_TAG_DATA, p->pair);
        return;
    }
    MPI_Recv(names[1], (int)sizeof names[1], MPI_CHAR, 1, P2P_TAG_DATA, p->pair, MPI_STATUS_IGNORE);
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, "\n")] = '\0';
    printf("# library: %s\n", lib);
    printf("# nodes: rank0=%s rank1=%s\n", names[0], names[1]);
    printf("# window: %d\n", p->window);
    printf("# value: from the fastest of %ld batches; iterations: per batch\n", batches);
    printf("# columns: benchmark size_bytes iterations value unit\n");
    fflush(stdout);
}

static void run_benchmark(const struct p2p_benchmark* bm, const struct options* o, const struct p2p_params* p,
    struct p2p_buffers* b)
{
    size_t max = o->max_size ? (size_t)o->max_size : bm->max_size;
    /* Quick runs take every third power of two: the shape of the curve, in
     * a fraction of the time. */
    size_t step = o->quick ? 8 : 2;

    if (p->rank == 0) {
        printf("# %s: %s, %s\n", bm->name, bm->what, bm->unit);
        fflush(stdout);
    }
    int first = 1;
    for (size_t size = bm->min_size;;) {
        long iters = iterations(bm, o, size);
        bm->kernel(p, b, size, warmup(iters, first));
        /* The fastest of a few batches: on a shared machine a rank that loses
         * its core for a few milliseconds would otherwise dominate the mean
         * of a small size.  Rank 1's times are not used. */
        long per_batch = iters / o->batches > 0 ? iters / o->batches : 1;
        double seconds = 0;
        for (long k = 0; k < o->batches; k++) {
            double t = bm->kernel(p, b, size, per_batch);
            if (k == 0 || t < seconds)
                seconds = t;
        }
        iters = per_batch;
        if (p->rank == 0) {
            /* Flushed per line: the runner shows progress from it, and a
             * run that dies later keeps the sizes already measured. */
            printf("%s %zu %ld %.4f %s\n", bm->name, size, iters, bm->value(p, size, iters, seconds), bm->unit);
            fflush(stdout);
        }
        first = 0;
        if (size >= max)
            break;
        size_t next = size == 0 ? 1 : size * step;
        size = next < max ? next : max;
    }
}

static void* alloc_touched(size_t bytes)
{
    void* p = NULL;
    if (posix_memalign(&p, 4096, bytes ? bytes : 1) != 0)
        return NULL;
    memset(p, 'h', bytes ? bytes : 1);
    return p;
}

int main(int argc, char** argv)
{
    int world_rank = 0, world_size = 0;
    struct options o;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);

    int rc = parse_options(argc, argv, world_rank, &o);
    if (rc == 0 && world_size < 2) {
        fprintf(stderr, "hashi-p2p: needs 2 processes (rank 0 and rank 1 on different nodes), got %d\n", world_size);
        rc = 2;
    }
    if (rc != 0) {
        MPI_Finalize();
        return rc == 1 ? 0 : rc;
    }

    struct p2p_params p = { MPI_COMM_NULL, world_rank, (int)o.window };
    MPI_Comm_split(MPI_COMM_WORLD, world_rank < 2 ? 0 : MPI_UNDEFINED, world_rank, &p.pair);
    if (p.pair != MPI_COMM_NULL) {
        size_t largest = 0;
        for (int i = 0; i < NBENCH; i++) {
            size_t m = o.max_size ? (size_t)o.max_size : benchmarks[i].max_size;
            if (o.selected[i] && m > largest)
                largest = m;
        }
        /* 16 MiB of receive slots: a whole window of distinct buffers up to
         * 256 KiB messages with the default window. */
        struct p2p_buffers b = { alloc_touched(largest), NULL, 16 * (size_t)MiB };
        if (b.recv_bytes < largest)
            b.recv_bytes = largest;
        b.recv = alloc_touched(b.recv_bytes);
        if (!b.send || !b.recv) {
            fprintf(stderr, "hashi-p2p: rank %d: cannot allocate %zu bytes of buffers\n", world_rank,
                largest + b.recv_bytes);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        print_header(&p, o.batches);
        for (int i = 0; i < NBENCH; i++) {
            if (o.selected[i])
                run_benchmark(&benchmarks[i], &o, &p, &b);
        }
        if (p.rank == 0) {
            /* Everything is measured: a runner can tell a hang in
             * MPI_Finalize from one in a benchmark. */
            printf("# end\n");
            fflush(stdout);
        }
        free(b.send);
        free(b.recv);
        MPI_Comm_free(&p.pair);
    }
    MPI_Finalize();
    return 0;
}
