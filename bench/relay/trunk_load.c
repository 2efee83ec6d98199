/* SPDX-License-Identifier: BSD-3-Clause */
/* trunk_load: the traffic of bench/relay/run-trunks between two clusters.
 *
 *   trunk_load streams MIB   every rank of cluster 0 sends to every rank of
 *                            cluster 1 (many pairs at once, one direction)
 *                            until MIB MiB have crossed
 *   trunk_load alltoall MIB  MPI_Alltoall over all ranks until MIB MiB have
 *                            crossed in each direction
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

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3 || (strcmp(argv[1], "streams") != 0 && strcmp(argv[1], "alltoall") != 0) || atof(argv[2]) <= 0) {
        if (rank == 0) {
            fprintf(stderr, "usage: trunk_load streams|alltoall MIB\n");
        }
        MPI_Finalize();
        return 2;
    }
    const int streams = strcmp(argv[1], "streams") == 0;
    const double target = atof(argv[2]) * 1048576.0;

    int *clusters = malloc(sizeof(int) * size);
    int mine = cluster_of_node();
    MPI_Allgather(&mine, 1, MPI_INT, clusters, 1, MPI_INT, MPI_COMM_WORLD);
    int n0 = 0, n1 = 0;
    for (int i = 0; i < size; i++) {
        n0 += clusters[i] == 0;
        n1 += clusters[i] == 1;
    }
    if (n0 == 0 || n1 == 0 || n0 + n1 != size) {
        if (rank == 0) {
            fprintf(stderr, "trunk_load: needs ranks in clusters 0 and 1 only (%d and %d of %d)\n", n0, n1, size);
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    const int block = streams ? 256 * 1024 : 64 * 1024;
    double per_round; /* bytes crossing one direction per round */
    int npeers = 0;
    int *peers = malloc(sizeof(int) * size);
    char *buf, *rbuf = NULL;
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * size);
    MPI_Status *statuses = malloc(sizeof(MPI_Status) * size);
    if (streams) {
        for (int i = 0; i < size; i++) {
            if (clusters[i] != mine) {
                peers[npeers++] = i;
            }
        }
        per_round = (double)n0 * n1 * block;
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

    /* Untimed round: the connections and routes through the relays. */
    if (streams) {
        streams_round(mine == 0, peers, npeers, buf, block, reqs, statuses);
    } else {
        MPI_Alltoall(buf, block, MPI_BYTE, rbuf, block, MPI_BYTE, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long r = 0; r < rounds; r++) {
        if (streams) {
            streams_round(mine == 0, peers, npeers, buf, block, reqs, statuses);
        } else {
            MPI_Alltoall(buf, block, MPI_BYTE, rbuf, block, MPI_BYTE, MPI_COMM_WORLD);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double secs = MPI_Wtime() - t0;
    if (rank == 0) {
        double bytes = per_round * rounds;
        printf("%s %.0f %.3f %.2f\n", argv[1], bytes, secs, bytes / secs / 1e6);
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
