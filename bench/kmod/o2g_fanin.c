/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receive bandwidth into one process as the number of sending peers grows
 * (bench/kmod/README.md): rank 0 receives, every other rank sends it
 * `total / (size - 1)` bytes in messages of `bytes` each, all at once after a
 * barrier. Rank 0 keeps a window of receives from any source posted and
 * prints "fanin SENDERS BYTES MB/s" for the time from the barrier to its
 * last message. Every payload is checked (sender rank and index in it).
 *   o2g-fanin [BYTES [TOTAL]]   (defaults: 65536 and 16 MiB)
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 32

static long arg_or(int argc, char** argv, int i, long fallback)
{
    long v = argc > i ? strtol(argv[i], NULL, 0) : fallback;

    if (v < 16 || v > (1L << 30)) {
        fprintf(stderr, "o2g-fanin: sizes from 16 bytes to 1 GiB, got %s\n", argv[i]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return v;
}

int main(int argc, char** argv)
{
    int rank, size, bad = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const long bytes = arg_or(argc, argv, 1, 65536);
    const long total = arg_or(argc, argv, 2, 16L << 20);
    if (size < 2) {
        fprintf(stderr, "o2g-fanin: needs a receiver and at least one sender\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int senders = size - 1;
    long per_sender = total / bytes / senders;
    if (per_sender < 1)
        per_sender = 1;

    if (rank != 0) {
        char* buf = malloc(bytes);
        MPI_Barrier(MPI_COMM_WORLD);
        for (long i = 0; i < per_sender; ++i) {
            memset(buf, (int)((rank + i) & 0xff), bytes);
            memcpy(buf, &i, sizeof i);
            MPI_Send(buf, (int)bytes, MPI_BYTE, 0, rank, MPI_COMM_WORLD);
        }
        free(buf);
    } else {
        const long messages = per_sender * senders;
        char* bufs = malloc((size_t)bytes * WINDOW);
        MPI_Request req[WINDOW];
        MPI_Status st;
        long posted = 0, done = 0;

        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        for (; posted < messages && posted < WINDOW; ++posted)
            MPI_Irecv(bufs + posted * bytes, (int)bytes, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                &req[posted]);
        while (done < messages) {
            int k;
            MPI_Waitany((int)(posted < WINDOW ? posted : WINDOW), req, &k, &st);
            const char* b = bufs + (long)k * bytes;
            long i;
            memcpy(&i, b, sizeof i);
            if (st.MPI_TAG != st.MPI_SOURCE || i < 0 || i >= per_sender ||
                (unsigned char)b[bytes - 1] != (unsigned char)((st.MPI_SOURCE + i) & 0xff))
                ++bad;
            ++done;
            if (posted < messages) {
                MPI_Irecv(bufs + (long)k * bytes, (int)bytes, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                    MPI_COMM_WORLD, &req[k]);
                ++posted;
            } else {
                req[k] = MPI_REQUEST_NULL;
            }
        }
        const double t = MPI_Wtime() - t0;
        printf("fanin %d %ld %.2f%s\n", senders, bytes, (double)(messages * bytes) / t / 1e6,
            bad ? " CORRUPT" : "");
        free(bufs);
    }
    MPI_Finalize();
    return bad ? 1 : 0;
}
