/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What FI_HASHI_RECV=kernel must match in the o2g module besides eager
 * receives into one buffer: tagged messages above the eager size (the
 * module matches their rendezvous request, user space fetches the data),
 * MPI_Probe / MPI_Iprobe / MPI_Improbe + MPI_Mrecv (the module's PEEK and
 * CLAIM), receives into a datatype of two blocks (a bounce buffer), and
 * MPI's order among messages of every size with one tag. Two ranks; every
 * byte is checked. Prints "probe-rendezvous OK" on rank 1.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char pattern(int seed, size_t i)
{
    return (unsigned char)(seed * 131 + i * 7 + (i >> 8));
}

static void fill(unsigned char *b, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = pattern(seed, i);
}

static void check(const unsigned char *b, size_t n, int seed, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != pattern(seed, i)) {
            fprintf(stderr, "probe-rendezvous: %s: byte %zu of %zu is %u, sent %u\n", what, i, n, b[i],
                    pattern(seed, i));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
}

static void expect(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "probe-rendezvous: %s\n", what);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* Sizes around the default eager limit (32 KiB) and well above it. */
static const size_t sizes[] = {8, 32768, 32769, 1u << 20, 4u << 20};
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define MAXSIZE (4u << 20)

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    expect(size == 2, "run with 2 ranks");
    unsigned char *buf = malloc(2 * MAXSIZE);
    unsigned char *buf2 = malloc(2 * MAXSIZE);
    expect(buf && buf2, "out of memory");

    if (rank == 0) {
        /* 1. Every size, probed then received (tag = index). */
        for (size_t k = 0; k < NSIZES; k++) {
            fill(buf, sizes[k], (int)k);
            MPI_Send(buf, (int)sizes[k], MPI_BYTE, 1, (int)k, MPI_COMM_WORLD);
        }
        /* 2. Order with one tag: small, large, small, large. */
        for (int i = 0; i < 4; i++) {
            size_t n = i % 2 ? (1u << 20) + i : 100 + i;
            fill(buf, n, 40 + i);
            MPI_Send(buf, (int)n, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
        }
        /* 3. Improbe + Mrecv, small and large. */
        for (int i = 0; i < 2; i++) {
            size_t n = i ? (3u << 20) : 500;
            fill(buf, n, 50 + i);
            MPI_Send(buf, (int)n, MPI_BYTE, 1, 8 + i, MPI_COMM_WORLD);
        }
        /* 4. Into a strided datatype on the receiver, small and large. */
        for (int i = 0; i < 2; i++) {
            size_t n = i ? (1u << 20) : 4096;
            fill(buf, n, 60 + i);
            MPI_Send(buf, (int)n, MPI_BYTE, 1, 10 + i, MPI_COMM_WORLD);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    } else {
        MPI_Status st;
        int count, flag;
        /* 1. MPI_Probe from any source with any tag sees them in order. */
        for (size_t k = 0; k < NSIZES; k++) {
            MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_BYTE, &count);
            expect(st.MPI_TAG == (int)k && st.MPI_SOURCE == 0, "MPI_Probe saw messages out of order");
            expect((size_t)count == sizes[k], "MPI_Probe gave the wrong count");
            memset(buf, 0, sizes[k]);
            MPI_Recv(buf, count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
            check(buf, sizes[k], (int)k, "a probed message");
        }
        /* 2. Wait until the first is there (unexpected), then receive all four in order. */
        MPI_Request reqs[4];
        for (;;) {
            MPI_Iprobe(0, 7, MPI_COMM_WORLD, &flag, &st);
            if (flag)
                break;
        }
        for (int i = 0; i < 4; i++)
            MPI_Irecv(buf + (size_t)i * (MAXSIZE / 2), MAXSIZE / 2, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &reqs[i]);
        MPI_Status sts[4];
        MPI_Waitall(4, reqs, sts);
        for (int i = 0; i < 4; i++) {
            size_t n = i % 2 ? (1u << 20) + i : 100 + i;
            MPI_Get_count(&sts[i], MPI_BYTE, &count);
            expect((size_t)count == n, "a message of one tag matched out of order (wrong length)");
            check(buf + (size_t)i * (MAXSIZE / 2), n, 40 + i, "a message of one tag");
        }
        /* 3. MPI_Improbe, then MPI_Mrecv. */
        for (int i = 0; i < 2; i++) {
            MPI_Message msg;
            size_t n = i ? (3u << 20) : 500;
            do
                MPI_Improbe(0, 8 + i, MPI_COMM_WORLD, &flag, &msg, &st);
            while (!flag);
            MPI_Get_count(&st, MPI_BYTE, &count);
            expect((size_t)count == n, "MPI_Improbe gave the wrong count");
            memset(buf, 0, n);
            MPI_Mrecv(buf, count, MPI_BYTE, &msg, &st);
            check(buf, n, 50 + i, "a matched-probe message");
        }
        /*
         * 4. Two blocks with a gap between them: with
         * MPIR_CVAR_CH4_OFI_ENABLE_PT2PT_NOPACK=1 MPICH posts them as one
         * receive of two buffers (the module fills a bounce buffer).
         */
        for (int i = 0; i < 2; i++) {
            size_t n = i ? (1u << 20) : 4096, half = n / 2, gap = 64;
            MPI_Datatype two_blocks;
            MPI_Type_vector(2, (int)half, (int)(half + gap), MPI_BYTE, &two_blocks);
            MPI_Type_commit(&two_blocks);
            memset(buf2, 0, n + gap);
            MPI_Recv(buf2, 1, two_blocks, 0, 10 + i, MPI_COMM_WORLD, &st);
            MPI_Type_free(&two_blocks);
            memcpy(buf, buf2, half);
            memcpy(buf + half, buf2 + half + gap, half);
            check(buf, n, 60 + i, "a receive into two blocks");
            for (size_t j = half; j < half + gap; j++)
                expect(buf2[j] == 0, "a receive into two blocks wrote between them");
        }
        MPI_Barrier(MPI_COMM_WORLD);
        printf("probe-rendezvous OK\n");
    }
    free(buf);
    free(buf2);
    MPI_Finalize();
    return 0;
}
