/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * p2p_latency.c - ping-pong: rank 0 sends, rank 1 answers with a message of
 * the same size; one-way latency is half a round trip.  Blocking calls on
 * purpose: this is the latency an application sees from MPI_Send/MPI_Recv.
 */
#include "p2p.h"

double p2p_pingpong(const struct p2p_params* p, struct p2p_buffers* b, size_t size, long iters)
{
    const int peer = 1 - p->rank;
    const int count = (int)size;

    MPI_Barrier(p->pair);
    double start = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        if (p->rank == 0) {
            MPI_Send(b->send, count, MPI_CHAR, peer, P2P_TAG_DATA, p->pair);
            MPI_Recv(b->recv, count, MPI_CHAR, peer, P2P_TAG_DATA, p->pair, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(b->recv, count, MPI_CHAR, peer, P2P_TAG_DATA, p->pair, MPI_STATUS_IGNORE);
            MPI_Send(b->send, count, MPI_CHAR, peer, P2P_TAG_DATA, p->pair);
        }
    }
    return MPI_Wtime() - start;
}
