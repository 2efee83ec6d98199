/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * p2p_exchange.c - bidirectional stream: both ranks post a window of
 * receives, then a window of sends, and wait for all of them.  Each window
 * ends only when both directions have delivered, so no acknowledgement is
 * needed.
 */
#include "p2p.h"

double p2p_exchange(const struct p2p_params* p, struct p2p_buffers* b, size_t size, long iters)
{
    MPI_Request reqs[2 * P2P_MAX_WINDOW];
    const int peer = 1 - p->rank;
    const int count = (int)size;

    MPI_Barrier(p->pair);
    double start = MPI_Wtime();
    for (long it = 0; it < iters; it++) {
        /* Receives first, so that messages find a posted buffer instead of
         * the unexpected queue. */
        for (int i = 0; i < p->window; i++)
            MPI_Irecv(p2p_recv_slot(b, size, i), count, MPI_CHAR, peer, P2P_TAG_DATA, p->pair, &reqs[i]);
        for (int i = 0; i < p->window; i++)
            MPI_Isend(b->send, count, MPI_CHAR, peer, P2P_TAG_DATA, p->pair, &reqs[p->window + i]);
        p2p_waitall(2 * p->window, reqs);
    }
    return MPI_Wtime() - start;
}
