/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * p2p_stream.c - one-way stream in windows: rank 0 posts a window of
 * non-blocking sends, rank 1 a window of non-blocking receives; after each
 * window rank 1 returns an empty acknowledgement, so rank 0 never runs more
 * than one window ahead and the time covers delivery, not just injection.
 * Unidirectional bandwidth (large messages) and message rate (small ones)
 * are the same pattern, counted differently (p2p_main.c).
 */
#include "p2p.h"

char* p2p_recv_slot(struct p2p_buffers* b, size_t size, int i)
{
    /* Concurrent receives into one buffer are erroneous MPI, so each message
     * of a window gets its own slot while the window fits into recv_bytes.
     * A full window of the largest messages would need window * 4 MiB per
     * rank, too much on a shared machine, so there slots are reused: the
     * content is never read, and every provider tested writes received
     * bytes in place without checking overlap. */
    size_t slots = size == 0 ? (size_t)P2P_MAX_WINDOW : b->recv_bytes / size;
    if (slots == 0)
        slots = 1;
    return b->recv + ((size_t)i % slots) * size;
}

double p2p_stream(const struct p2p_params* p, struct p2p_buffers* b, size_t size, long iters)
{
    MPI_Request reqs[P2P_MAX_WINDOW];
    const int peer = 1 - p->rank;
    const int count = (int)size;

    MPI_Barrier(p->pair);
    double start = MPI_Wtime();
    for (long it = 0; it < iters; it++) {
        if (p->rank == 0) {
            for (int i = 0; i < p->window; i++)
                MPI_Isend(b->send, count, MPI_CHAR, peer, P2P_TAG_DATA, p->pair, &reqs[i]);
            p2p_waitall(p->window, reqs);
            MPI_Recv(NULL, 0, MPI_CHAR, peer, P2P_TAG_ACK, p->pair, MPI_STATUS_IGNORE);
        } else {
            for (int i = 0; i < p->window; i++)
                MPI_Irecv(p2p_recv_slot(b, size, i), count, MPI_CHAR, peer, P2P_TAG_DATA, p->pair, &reqs[i]);
            p2p_waitall(p->window, reqs);
            MPI_Send(NULL, 0, MPI_CHAR, peer, P2P_TAG_ACK, p->pair);
        }
    }
    return MPI_Wtime() - start;
}
