/* SPDX-License-Identifier: BSD-3-Clause */
/* The job tests/security/injection.sh attacks. Rank 3 sends three genuine
 * messages (tag 7) to rank 0; rank 0 waits until the attack is over (the
 * file argv[1] exists), receives three messages from MPI_ANY_SOURCE with tag
 * 7 and prints each, then, after a barrier, reports whether any further
 * tag-7 message is waiting. A stranger's message that got in would show up
 * as one of the three or as an extra one. */
#include "attack_window.h"

#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2 || size < 4) {
        if (rank == 0)
            fprintf(stderr, "usage: inject_target FLAG-FILE (4 or more ranks)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* Every rank talks to every other once, so all of them listen and are
     * connected before the attack. */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &size, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    attack_window(rank, argv[1]);
    if (rank == 3)
        for (int k = 0; k < 3; ++k) {
            char text[32];
            snprintf(text, sizeof text, "GENUINE-%d", k);
            MPI_Send(text, (int)strlen(text) + 1, MPI_CHAR, 0, 7, MPI_COMM_WORLD);
        }
    if (rank == 0)
        for (int k = 0; k < 3; ++k) {
            char text[64] = "";
            MPI_Status st;
            MPI_Recv(text, sizeof text, MPI_CHAR, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &st);
            printf("rank 0 received from source %d tag 7: '%s'\n", st.MPI_SOURCE, text);
        }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        int extra = 0;
        MPI_Iprobe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &extra, MPI_STATUS_IGNORE);
        printf("extra tag-7 messages waiting: %d\n", extra);
    }
    MPI_Finalize();
    return 0;
}
