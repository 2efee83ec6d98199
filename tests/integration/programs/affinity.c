/* SPDX-License-Identifier: BSD-3-Clause */
/* Prints the CPUs each rank may run on, read from inside the rank with
 * sched_getaffinity after MPI_Init (so whatever MPICH does at start-up is
 * included), one line per rank: "affinity rank=R node=HOST cpus=0,1". */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        perror("sched_getaffinity");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char list[4096];
    int len = 0;
    for (int c = 0; c < CPU_SETSIZE && len < (int)sizeof list - 16; ++c) {
        if (CPU_ISSET(c, &set)) {
            len += snprintf(list + len, sizeof list - len, "%s%d", len ? "," : "", c);
        }
    }
    const char *node = getenv("HASHI_NODE_NAME");
    printf("affinity rank=%d node=%s cpus=%s\n", rank, node ? node : "-", list);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
