/* SPDX-License-Identifier: BSD-3-Clause */
/* Bursts of small non-blocking sends, the traffic send coalescing holds
 * (src/transport/engine/send_coalescing.hpp), checked byte by byte:
 *  - every rank sends `rounds` windows of 33 messages of 1 B to 4 KiB to
 *    every other rank (injects and eager sends, tags in order), then waits;
 *    the receivers check each message's length, tag order and contents;
 *  - then rank 0 sends a burst to rank 1 and waits outside MPI, for a file
 *    (argv[2]) that rank 1 creates once it has every message of the burst:
 *    MPI's progress rule says the receives must complete although rank 0
 *    makes no MPI call (the provider's flusher thread writes what is held).
 *    Rank 0 gives up after 30 s and says so.
 * Usage: burst ROUNDS SIGNAL_FILE. Prints "burst: ok" and exits 0, or names
 * the first wrong message. */
#include <mpi.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* 33 messages to each of two peers: a burst of 66 sends, the first written
 * at once, the next 64 held, and the last one meets the 64-frame bound
 * (the case that once left a send queued unseen: run with 3 ranks). */
enum { kWindow = 33, kMaxLen = 4096 };

static unsigned char expected(int from, int round, int i, int j)
{
    return (unsigned char)(from * 131 + round * 31 + i * 7 + j);
}

static int length_of(int round, int i)
{
    return 1 + (round * kWindow + i) * 61 % kMaxLen;
}

static void fill(unsigned char* b, int from, int round, int i)
{
    for (int j = 0; j < length_of(round, i); ++j)
        b[j] = expected(from, round, i, j);
}

static int check(const unsigned char* b, int got, int from, int round, int i)
{
    if (got != length_of(round, i)) {
        fprintf(stderr, "burst: message %d of round %d from %d: %d bytes, expected %d\n", i, round, from, got,
            length_of(round, i));
        return 1;
    }
    for (int j = 0; j < got; ++j)
        if (b[j] != expected(from, round, i, j)) {
            fprintf(stderr, "burst: message %d of round %d from %d: byte %d is wrong\n", i, round, from, j);
            return 1;
        }
    return 0;
}

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int rounds = argc > 1 ? atoi(argv[1]) : 20;
    const int peers = size - 1;
    unsigned char* out = malloc((size_t)kWindow * kMaxLen);
    unsigned char* in = malloc((size_t)peers * kWindow * kMaxLen);
    MPI_Request* reqs = malloc(sizeof(MPI_Request) * (size_t)2 * peers * kWindow);
    int bad = 0;

    for (int round = 0; round < rounds && !bad; ++round) {
        for (int i = 0; i < kWindow; ++i)
            fill(out + (size_t)i * kMaxLen, rank, round, i);
        int n = 0;
        for (int p = 0, k = 0; p < size; ++p) {
            if (p == rank)
                continue;
            for (int i = 0; i < kWindow; ++i)
                MPI_Irecv(in + ((size_t)k * kWindow + i) * kMaxLen, kMaxLen, MPI_BYTE, p, i, MPI_COMM_WORLD, &reqs[n++]);
            ++k;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        // The sends of a window back to back, the way coalescing holds them.
        for (int p = 0; p < size; ++p) {
            if (p == rank)
                continue;
            for (int i = 0; i < kWindow; ++i)
                MPI_Isend(out + (size_t)i * kMaxLen, length_of(round, i), MPI_BYTE, p, i, MPI_COMM_WORLD, &reqs[n++]);
        }
        MPI_Status* st = malloc(sizeof(MPI_Status) * (size_t)n);
        MPI_Waitall(n, reqs, st);
        for (int p = 0, k = 0; p < size && !bad; ++p) {
            if (p == rank)
                continue;
            for (int i = 0; i < kWindow && !bad; ++i) {
                int got = 0;
                MPI_Get_count(&st[k * kWindow + i], MPI_BYTE, &got);
                bad = check(in + ((size_t)k * kWindow + i) * kMaxLen, got, p, round, i);
            }
            ++k;
        }
        free(st);
    }

    // A burst, then a wait outside MPI: the sends already complete, so
    // MPI_Waitall does not reach the provider, and nothing of rank 0 does
    // until rank 1 has had them all.
    const char* signal_file = argc > 2 ? argv[2] : NULL;
    if (size >= 2 && !bad && signal_file != NULL) {
        const int round = rounds;
        if (rank == 0) {
            for (int i = 0; i < kWindow; ++i)
                fill(out + (size_t)i * kMaxLen, 0, round, i);
            for (int i = 0; i < kWindow; ++i)
                MPI_Isend(out + (size_t)i * kMaxLen, length_of(round, i), MPI_BYTE,
                    1, i, MPI_COMM_WORLD, &reqs[i]);
            MPI_Status done[kWindow];
            MPI_Waitall(kWindow, reqs, done);
            int waited_ms = 0;
            while (access(signal_file, F_OK) != 0 && waited_ms < 30000) {
                usleep(1000);
                ++waited_ms;
            }
            if (access(signal_file, F_OK) != 0) {
                fprintf(stderr, "burst: rank 1 did not get rank 0's burst in 30 s while rank 0 made no MPI call\n");
                bad = 1;
            }
            MPI_Recv(NULL, 0, MPI_BYTE, 1, kWindow, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            for (int i = 0; i < kWindow && !bad; ++i) {
                MPI_Status st;
                MPI_Recv(in, kMaxLen, MPI_BYTE, 0, i, MPI_COMM_WORLD, &st);
                int got = 0;
                MPI_Get_count(&st, MPI_BYTE, &got);
                bad = check(in, got, 0, round, i);
            }
            FILE* f = fopen(signal_file, "w");
            if (f == NULL) {
                fprintf(stderr, "burst: cannot create %s: %s\n", signal_file, strerror(errno));
                bad = 1;
            } else {
                fclose(f);
            }
            MPI_Send(NULL, 0, MPI_BYTE, 0, kWindow, MPI_COMM_WORLD);
        }
    }

    int any_bad = 0;
    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && !any_bad)
        printf("burst: ok (%d ranks, %d rounds of %d messages to each peer)\n", size, rounds, kWindow);
    free(out);
    free(in);
    free(reqs);
    MPI_Finalize();
    return any_bad;
}
