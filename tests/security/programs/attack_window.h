/* SPDX-License-Identifier: BSD-3-Clause */
/* The window in which a security test attacks a running job: rank 0 says
 * "ready" and keeps MPI's progress going (so its provider answers
 * connections, as a rank inside any MPI call would) until the test creates
 * the file `flag`, at most 60 s; the other ranks wait in a barrier. */
#ifndef HASHI_TESTS_ATTACK_WINDOW_H
#define HASHI_TESTS_ATTACK_WINDOW_H

#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

static void attack_window(int rank, const char* flag)
{
    if (rank == 0) {
        printf("ready\n");
        fflush(stdout);
        for (int i = 0; i < 30000 && access(flag, F_OK) != 0; ++i) {
            int pending;
            MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &pending, MPI_STATUS_IGNORE);
            usleep(2000);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

#endif
