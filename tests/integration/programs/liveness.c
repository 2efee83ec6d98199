/* SPDX-License-Identifier: BSD-3-Clause */
/* A job for the liveness checks (tests/wan/liveness.sh).
 *
 *   liveness sleep S     the last rank (the "victim") prints its pid and
 *                        sleeps S seconds outside MPI, then takes 3 MiB of
 *                        messages rank 0 sent it meanwhile (they fill the
 *                        sockets: bytes unacknowledged for minutes must not
 *                        kill a live peer) and sends a token to rank 0;
 *                        rank 0 waits for it in a receive directed at the
 *                        victim, every other rank waits in a receive from
 *                        rank 0; then a barrier. Stopping the victim
 *                        (SIGSTOP) must end the job; if it only sleeps, the
 *                        job must complete ("liveness: sleep: OK").
 *   liveness traffic S   every rank exchanges with the rank half the job
 *                        away (the other cluster when ranks are contiguous
 *                        per cluster) and joins an allreduce, every 20 ms
 *                        for S seconds; rank 0 prints each second's
 *                        iteration count. A WAN fault must end the job.
 *
 * Every rank prints "rank R ready on HOST" once MPI is up. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double now(void) { return MPI_Wtime(); }

int main(int argc, char **argv)
{
    int rank, size, len;
    char host[MPI_MAX_PROCESSOR_NAME];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(host, &len);
    if (argc != 3 || (strcmp(argv[1], "sleep") != 0 && strcmp(argv[1], "traffic") != 0) || atoi(argv[2]) <= 0 ||
        size < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: liveness sleep|traffic SECONDS (at least 2 ranks)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int seconds = atoi(argv[2]);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d ready on %s\n", rank, host);
    fflush(stdout);

    if (strcmp(argv[1], "sleep") == 0) {
        enum { nmsg = 192, msg_ints = 4096 }; /* 192 x 16 KiB: eager, more than the sockets hold */
        static int flood[nmsg][msg_ints];
        MPI_Request reqs[nmsg];
        const int victim = size - 1;
        int token = 0;
        if (rank == victim) {
            printf("victim rank %d pid %d on %s sleeps %d s outside MPI\n", rank, (int)getpid(), host, seconds);
            fflush(stdout);
            sleep((unsigned)seconds);
            for (int i = 0; i < nmsg; ++i) {
                MPI_Recv(flood[i], msg_ints, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                token += flood[i][msg_ints - 1] == i;
            }
            MPI_Send(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
        } else if (rank == 0) {
            for (int i = 0; i < nmsg; ++i) {
                flood[i][msg_ints - 1] = i;
                MPI_Isend(flood[i], msg_ints, MPI_INT, victim, 9, MPI_COMM_WORLD, &reqs[i]);
            }
            MPI_Recv(&token, 1, MPI_INT, victim, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Waitall(nmsg, reqs, MPI_STATUSES_IGNORE);
            for (int r = 1; r < victim; ++r)
                MPI_Send(&token, 1, MPI_INT, r, 8, MPI_COMM_WORLD);
        } else {
            MPI_Recv(&token, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            printf("liveness: sleep: OK (token %d after %d s)\n", token, seconds);
    } else {
        const int partner = (rank + size / 2) % size;
        const double start = now();
        double next_report = start + 1.0;
        long it = 0;
        int buf_out[256], buf_in[256];
        memset(buf_out, 0, sizeof buf_out);
        for (int stop = 0; !stop;) {
            MPI_Sendrecv(buf_out, 256, MPI_INT, partner, 1, buf_in, 256, MPI_INT, partner, 1, MPI_COMM_WORLD,
                MPI_STATUS_IGNORE);
            /* Rank 0's clock decides, so every rank leaves at the same iteration. */
            int mine = rank == 0 && now() - start >= seconds;
            MPI_Allreduce(&mine, &stop, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
            ++it;
            if (rank == 0 && now() >= next_report) {
                printf("liveness: traffic: iteration %ld\n", it);
                fflush(stdout);
                next_report += 1.0;
            }
            usleep(20000);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            printf("liveness: traffic: OK (%ld iterations)\n", it);
    }
    MPI_Finalize();
    return 0;
}
