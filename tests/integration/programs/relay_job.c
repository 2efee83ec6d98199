/* SPDX-License-Identifier: BSD-3-Clause */
/* A job for the relay checks (tests/wan/relay.sh): every pair of ranks
 * exchanges a small (eager) and a large (rendezvous) message whose bytes
 * depend on both ranks, and checks every byte; then an allreduce. With
 * "traffic S" it keeps exchanging with the rank half the job away for S
 * seconds (a relay fault must end the job). With "quiet S", first of all
 * (before the pairs), each rank of the first half waits on its partner in
 * the other half (rank size-1-r: not a pair MPI_Init's collectives connect)
 * while the partner stays silent for S seconds, then the other way round,
 * then the first way again: run with a peer timeout below S, the waiting
 * rank's liveness pings must be answered through the relays when the two
 * have no connection yet, when the waiting rank opened it and when its
 * partner did. With "stripe N" (instead of the pairs), the first rank of
 * each half sends the other N rounds of a large (striped) message, a small
 * one, a medium one just above the striping threshold and a small one, all
 * with the same tag, half of them received late (unexpected): every
 * message must match in the order sent with its length and bytes intact.
 * Prints "relay_job: OK" on rank 0 and each rank's HASHI_RELAYS. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { small = 1024, large = 3 << 20 };

static unsigned char pattern(int from, int to, long i) { return (unsigned char)(from * 31 + to * 7 + i * 13); }

int main(int argc, char **argv)
{
    int rank, size, bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *relays = getenv("HASHI_RELAYS");
    char host[MPI_MAX_PROCESSOR_NAME];
    int len;
    MPI_Get_processor_name(host, &len);
    printf("rank %d on %s relays=%s\n", rank, host, relays ? relays : "none");
    fflush(stdout);
    if (argc == 3 && strcmp(argv[1], "quiet") == 0 && size % 2 == 0) {
        const unsigned silence = (unsigned)atoi(argv[2]);
        const int half = size / 2, partner = size - 1 - rank;
        for (int round = 0; round < 3; ++round) {
            int token = 0;
            if ((rank < half) == (round != 1)) {
                MPI_Recv(&token, 1, MPI_INT, partner, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (token != partner + 1)
                    ++bad;
            } else {
                sleep(silence); /* outside MPI: only the liveness thread answers */
                token = rank + 1;
                MPI_Send(&token, 1, MPI_INT, partner, 6, MPI_COMM_WORLD);
            }
        }
        if (rank == 0)
            printf("relay_job: quiet: waited %u s on a silent partner 3 times\n", silence);
    }
    unsigned char *out = malloc(large), *in = malloc(large);
    const int stripe = argc == 3 && strcmp(argv[1], "stripe") == 0;
    if (stripe && size % 2 == 0 && rank % (size / 2) == 0) {
        /* Message m of round r: its length says which it is, its bytes
         * depend on m, so a message matched out of order shows. */
        const int rounds = atoi(argv[2]), partner = (rank + size / 2) % size;
        for (int dir = 0; dir < 2; ++dir) {
            const int sending = (rank == 0) == (dir == 0);
            for (int m = 0; m < 4 * rounds; ++m) {
                const long kind = m % 4;
                const long n = kind == 0 ? (1 << 20) + (m / 4) * 4099L : kind == 2 ? (300 << 10) + m : 64 + m;
                if (sending) {
                    for (long i = 0; i < n; ++i)
                        out[i] = pattern(m, dir, i);
                    MPI_Send(out, (int)n, MPI_BYTE, partner, 9, MPI_COMM_WORLD);
                    continue;
                }
                if (m % 8 == 4)
                    usleep(100000); /* let the next ones arrive unexpected */
                MPI_Status st;
                int got = 0;
                MPI_Recv(in, large, MPI_BYTE, partner, 9, MPI_COMM_WORLD, &st);
                MPI_Get_count(&st, MPI_BYTE, &got);
                long i = 0;
                while (got == n && i < n && in[i] == pattern(m, dir, i))
                    ++i;
                if (got != n || i != n) {
                    if (bad++ == 0)
                        fprintf(stderr, "relay_job: stripe: message %d: %d bytes (want %ld), first wrong byte %ld\n",
                            m, got, n, i);
                }
            }
        }
        if (rank == 0)
            printf("relay_job: stripe: %d rounds each way, in order and intact: %s\n", rounds, bad ? "no" : "yes");
    }
    for (int step = 1; step < size && !stripe; ++step) {
        const int to = (rank + step) % size, from = (rank - step + size) % size;
        for (int k = 0; k < 2; ++k) {
            const long n = k == 0 ? small : large;
            for (long i = 0; i < n; ++i)
                out[i] = pattern(rank, to, i);
            MPI_Sendrecv(out, (int)n, MPI_BYTE, to, k, in, (int)n, MPI_BYTE, from, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (long i = 0; i < n; ++i)
                if (in[i] != pattern(from, rank, i)) {
                    ++bad;
                    break;
                }
        }
    }
    if (argc == 3 && strcmp(argv[1], "traffic") == 0) {
        const double end = MPI_Wtime() + atof(argv[2]);
        const int partner = (rank + size / 2) % size;
        long it = 0;
        for (int stop = 0; !stop; ++it) {
            MPI_Sendrecv(out, 4096, MPI_BYTE, partner, 5, in, 4096, MPI_BYTE, partner, 5, MPI_COMM_WORLD,
                MPI_STATUS_IGNORE);
            int mine = rank == 0 && MPI_Wtime() >= end;
            MPI_Allreduce(&mine, &stop, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
            if (rank == 0 && it % 50 == 0) {
                printf("relay_job: traffic: iteration %ld\n", it);
                fflush(stdout);
            }
            usleep(20000);
        }
    }
    int total = 0;
    MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && total == 0)
        printf("relay_job: OK (%d ranks, every pair, %d and %d bytes)\n", size, small, large);
    else if (rank == 0)
        printf("relay_job: %d corrupt messages\n", total);
    free(out);
    free(in);
    MPI_Finalize();
    return total != 0;
}
