/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * p2p.h - what the parts of hashi-p2p share: the benchmark table, the
 * buffers and the tags.
 *
 * Each benchmark is one "kernel": a function that runs a given number of
 * iterations of its communication pattern between rank 0 and rank 1 and
 * returns the seconds rank 0 measured, plus a function that turns those
 * seconds into the reported value.  The driver (p2p_main.c) does the size
 * loop, the warm-up, the iteration counts and the output, so a kernel holds
 * nothing but its pattern.
 */
#ifndef HASHI_BENCH_P2P_H
#define HASHI_BENCH_P2P_H

#include <mpi.h>
#include <stddef.h>

enum { P2P_TAG_DATA = 1, P2P_TAG_ACK = 2 };

/* Buffers of one run, allocated once for the largest size and touched, so
 * that no page fault and no allocation is timed. */
struct p2p_buffers {
    char* send;
    char* recv;
    /* Receives of one window land in distinct slots of recv while the window
     * fits in recv_bytes; beyond that slots are reused (see p2p_stream.c). */
    size_t recv_bytes;
};

struct p2p_params {
    MPI_Comm pair; /* ranks 0 and 1 of MPI_COMM_WORLD, nothing else */
    int rank;      /* 0 or 1 in pair */
    int window; /* messages in flight per window (bandwidth, message rate) */
};

/* Runs iters iterations for one message size; returns the elapsed seconds
 * on rank 0 (anything on rank 1). */
typedef double (*p2p_kernel)(const struct p2p_params* p, struct p2p_buffers* b, size_t size, long iters);

/* Turns (size, iterations, seconds) into the reported value. */
typedef double (*p2p_value)(const struct p2p_params* p, size_t size, long iters, double seconds);

struct p2p_benchmark {
    const char* name;
    const char* unit;
    const char* what; /* one line for --help and the output header */
    p2p_kernel kernel;
    p2p_value value;
    size_t min_size;   /* smallest message (0 makes no sense for a rate) */
    size_t max_size;   /* default largest message */
    long base_iters;   /* iterations for small messages (full run) */
    long min_iters;    /* iterations never go below this */
};

/* MPI_Waitall without statuses.  GCC takes MPI_STATUSES_IGNORE (a
 * sentinel pointer) for an array of size 0 and warns on every call; the
 * warning is wrong, and statuses would be work the benchmark does not need. */
static inline void p2p_waitall(int count, MPI_Request* reqs)
{
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
    MPI_Waitall(count, reqs, MPI_STATUSES_IGNORE);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
}

/* The kernels (one file each). */
double p2p_pingpong(const struct p2p_params* p, struct p2p_buffers* b, size_t size, long iters);
double p2p_stream(const struct p2p_params* p, struct p2p_buffers* b, size_t size, long iters);
double p2p_exchange(const struct p2p_params* p, struct p2p_buffers* b, size_t size, long iters);

/* Largest window: bounds the request arrays. */
enum { P2P_MAX_WINDOW = 1024 };

/* Where the receive of message i of a window goes (p2p_stream.c). */
char* p2p_recv_slot(struct p2p_buffers* b, size_t size, int i);

#endif
