/* SPDX-License-Identifier: BSD-3-Clause */
/* trunk_load: the traffic of bench/relay/run-trunks between two clusters.
 *
 *   trunk_load streams MIB   every rank of cluster 0 sends to every rank of
 *                            cluster 1 (many pairs at once, one direction)
 *                            until MIB MiB have crossed; ranks of clusters
 *                            2 and up only stand by
 *   trunk_load fanout MIB    every rank of cluster 0 sends to every rank of
 *                            every other cluster until MIB MiB have left
 *                            cluster 0
 *   trunk_load alltoall MIB  MPI_Alltoall over all ranks until MIB MiB have
 *                            crossed in each direction
 *   trunk_load latency MIB   the last rank of each cluster ping-pong 8 bytes,
 *                            alone, then (after one untimed round of the
 *                            load, which opens its routes) while every
 *                            other rank streams to
 *                            the other cluster's (both directions at once)
 *                            until MIB MiB have crossed each way; the last
 *                            rank of cluster 0 prints "latency IDLE_US
 *                            LOADED_MEDIAN_US LOADED_P90_US PINGS": one-way
 *                            times, half the round trips
 *
 * A rank's cluster is read from its node's name (cCnJ, as hashi-testbed
 * names nodes), so it does not depend on how the launcher numbered ranks.
 * Rank 0 prints one line: "MODE bytes_per_direction seconds MB/s", the
 * throughput being what crossed the WAN in one direction per second. The
 * first round (connections, the relays' routes) is not timed. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cluster_of_node(void)
{
    char name[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    MPI_Get_processor_name(name, &len);
    if (name[0] != 'c' || name[1] < '0' || name[1] > '9') {
        fprintf(stderr, "trunk_load: node name '%s' is not a testbed node (cCnJ)\n", name);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return atoi(name + 1);
}

/* One round of streams: every sender to every receiver, `block` bytes each. */
static void streams_round(
    int me_sends, const int *peers, int npeers, char *buf, int block, MPI_Request *reqs, MPI_Status *statuses)
{
    for (int i = 0; i < npeers; i++) {
        if (me_sends) {
            MPI_Isend(buf + (size_t)i * block, block, MPI_BYTE, peers[i], 7, MPI_COMM_WORLD, &reqs[i]);
        } else {
            MPI_Irecv(buf + (size_t)i * block, block, MPI_BYTE, peers[i], 7, MPI_COMM_WORLD, &reqs[i]);
        }
    }
    /* Statuses rather than MPI_STATUSES_IGNORE: g++ 12's -Wstringop-overflow
     * takes that constant for an empty array. */
    MPI_Waitall(npeers, reqs, statuses);
}

/* One round of the latency mode's load: `block` bytes to and from every
 * peer at once. */
static void exchange_round(
    const int *peers, int npeers, char *out, char *in, int block, MPI_Request *reqs, MPI_Status *statuses)
{
    for (int i = 0; i < npeers; i++) {
        MPI_Irecv(in + (size_t)i * block, block, MPI_BYTE, peers[i], 7, MPI_COMM_WORLD, &reqs[i]);
        MPI_Isend(out + (size_t)i * block, block, MPI_BYTE, peers[i], 7, MPI_COMM_WORLD, &reqs[npeers + i]);
    }
    MPI_Waitall(2 * npeers, reqs, statuses);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The ping-pong of `latency` between ranks a (cluster 0, prints) and b: a
 * sends {sequence, stop}, b echoes it. Returns the round trips' count into
 * rtts (seconds), at most max; pings until *stop says so (a) or until a
 * ping says stop (b). `done_from` >= 0: a rank whose message (tag 9) says
 * the load ended. */
static int ping_pong(int me_a, int other, double *rtts, int max, int fixed, int done_from)
{
    int count = 0, stop = 0;
    long msg[2] = {0, 0};
    for (;;) {
        if (me_a) {
            if (done_from >= 0 && !stop) {
                int flag = 0;
                MPI_Iprobe(done_from, 9, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
                if (flag) {
                    MPI_Recv(NULL, 0, MPI_BYTE, done_from, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    stop = 1;
                }
            }
            if (fixed > 0 && count + 1 >= fixed) {
                stop = 1;
            }
            msg[0] = count;
            msg[1] = stop;
            double t = MPI_Wtime();
            MPI_Send(msg, 2, MPI_LONG, other, 8, MPI_COMM_WORLD);
            MPI_Recv(msg, 2, MPI_LONG, other, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (count < max) {
                rtts[count] = MPI_Wtime() - t;
            }
            count++;
            if (stop) {
                return count < max ? count : max;
            }
        } else {
            MPI_Recv(msg, 2, MPI_LONG, other, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(msg, 2, MPI_LONG, other, 8, MPI_COMM_WORLD);
            if (msg[1]) {
                return 0;
            }
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3 ||
        (strcmp(argv[1], "streams") != 0 && strcmp(argv[1], "fanout") != 0 && strcmp(argv[1], "alltoall") != 0 &&
            strcmp(argv[1], "latency") != 0) ||
        atof(argv[2]) <= 0) {
        if (rank == 0) {
            fprintf(stderr, "usage: trunk_load streams|fanout|alltoall|latency MIB\n");
        }
        MPI_Finalize();
        return 2;
    }
    const int latency = strcmp(argv[1], "latency") == 0;
    const int fanout = strcmp(argv[1], "fanout") == 0;
    const int streams = strcmp(argv[1], "streams") == 0 || fanout || latency;
    /* Where more than clusters 0 and 1 may have ranks. */
    const int more_clusters = strcmp(argv[1], "streams") == 0 || fanout;
    const double target = atof(argv[2]) * 1048576.0;

    int *clusters = malloc(sizeof(int) * size);
    int mine = cluster_of_node();
    MPI_Allgather(&mine, 1, MPI_INT, clusters, 1, MPI_INT, MPI_COMM_WORLD);
    int n0 = 0, n1 = 0;
    for (int i = 0; i < size; i++) {
        n0 += clusters[i] == 0;
        n1 += clusters[i] == 1;
    }
    /* Ranks of further clusters stand by in streams (their relays' trunks
     * open and idle beside the busy one: run-trunk-share). */
    if (n0 == 0 || n1 == 0 || (n0 + n1 != size && !more_clusters)) {
        if (rank == 0) {
            fprintf(stderr, "trunk_load: needs ranks in clusters 0 and 1%s (%d and %d of %d)\n",
                more_clusters ? "" : " only", n0, n1, size);
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    /* latency: the last rank of each cluster ping-pongs, the others load
     * the trunks both ways; they are left out of the load. */
    int last0 = -1, last1 = -1;
    for (int i = 0; i < size; i++) {
        if (clusters[i] == 0) {
            last0 = i;
        } else if (clusters[i] == 1) {
            last1 = i;
        }
    }
    if (latency && (n0 < 2 || n1 < 2)) {
        if (rank == 0) {
            fprintf(stderr, "trunk_load: latency needs 2 or more ranks in each cluster\n");
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int pinger = latency && (rank == last0 || rank == last1);

    const int block = streams ? 256 * 1024 : 64 * 1024;
    double per_round; /* bytes crossing one direction per round */
    int npeers = 0;
    int *peers = malloc(sizeof(int) * size);
    char *buf, *rbuf = NULL;
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * size);
    MPI_Status *statuses = malloc(sizeof(MPI_Status) * size);
    if (streams) {
        for (int i = 0; i < size; i++) {
            const int pair = fanout ? (mine == 0) != (clusters[i] == 0) : mine <= 1 && clusters[i] == 1 - mine;
            if (pair && !(latency && (i == last0 || i == last1))) {
                peers[npeers++] = i;
            }
        }
        per_round = latency ? (double)(n0 - 1) * (n1 - 1) * block
            : fanout        ? (double)n0 * (size - n0) * block
                            : (double)n0 * n1 * block;
        buf = malloc((size_t)npeers * block);
        memset(buf, rank, (size_t)npeers * block);
    } else {
        per_round = (double)n0 * n1 * block;
        buf = malloc((size_t)size * block);
        rbuf = malloc((size_t)size * block);
        memset(buf, rank, (size_t)size * block);
    }
    long rounds = (long)(target / per_round + 0.5);
    if (rounds < 1) {
        rounds = 1;
    }

    if (latency) {
        /* Idle round trips first (the first few open the route), then the
         * loaded ones: the bulk ranks exchange both ways at once, and the
         * first of cluster 0's tells the pinger when it is done. */
        enum { max_pings = 100000 };
        double *rtts = pinger ? malloc(sizeof(double) * max_pings) : NULL;
        double idle = 0;
        int first_bulk0 = -1;
        for (int i = 0; i < size && first_bulk0 < 0; i++) {
            if (clusters[i] == 0 && i != last0) {
                first_bulk0 = i;
            }
        }
        if (pinger) {
            int n = ping_pong(rank == last0, rank == last0 ? last1 : last0, rtts, max_pings, 60, -1);
            if (rank == last0) {
                qsort(rtts + 10, n - 10, sizeof(double), by_value);
                idle = rtts[10 + (n - 10) / 2] / 2;
            }
        }
        MPI_Barrier(MPI_COMM_WORLD); /* idle: nothing else on the trunks */
        MPI_Request *both = malloc(sizeof(MPI_Request) * 2 * size);
        MPI_Status *st = malloc(sizeof(MPI_Status) * 2 * size);
        char *in = malloc((size_t)npeers * block);
        if (!pinger) {
            exchange_round(peers, npeers, buf, in, block, both, st); /* the load's routes, untimed */
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (pinger) {
            int n = ping_pong(rank == last0, rank == last0 ? last1 : last0, rtts, max_pings, 0, first_bulk0);
            if (rank == last0) {
                qsort(rtts, n, sizeof(double), by_value);
                printf("latency %.1f %.1f %.1f %d\n", idle * 1e6, rtts[n / 2] / 2 * 1e6, rtts[(n * 9) / 10] / 2 * 1e6, n);
            }
            free(rtts);
        } else {
            for (long r = 0; r < rounds; r++) {
                exchange_round(peers, npeers, buf, in, block, both, st);
            }
            if (rank == first_bulk0) {
                MPI_Send(NULL, 0, MPI_BYTE, last0, 9, MPI_COMM_WORLD);
            }
        }
        free(both);
        free(st);
        free(in);
        MPI_Barrier(MPI_COMM_WORLD);
    } else {
        /* Round -1 is untimed: the connections and routes through the relays. */
        double t0 = 0;
        for (long r = -1; r < rounds; r++) {
            if (r == 0) {
                MPI_Barrier(MPI_COMM_WORLD);
                t0 = MPI_Wtime();
            }
            if (streams) {
                streams_round(mine == 0, peers, npeers, buf, block, reqs, statuses);
            } else {
                MPI_Alltoall(buf, block, MPI_BYTE, rbuf, block, MPI_BYTE, MPI_COMM_WORLD);
            }
            if (r == rounds - 1) {
                MPI_Barrier(MPI_COMM_WORLD);
                double secs = MPI_Wtime() - t0;
                if (rank == 0) {
                    double bytes = per_round * rounds;
                    printf("%s %.0f %.3f %.2f\n", argv[1], bytes, secs, bytes / secs / 1e6);
                }
            }
        }
    }
    free(buf);
    free(rbuf);
    free(peers);
    free(reqs);
    free(statuses);
    free(clusters);
    MPI_Finalize();
    return 0;
}
