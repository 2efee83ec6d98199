/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ring.c - pass a token around all ranks of MPI_COMM_WORLD.
 *
 * Demonstrates blocking point-to-point messages arranged in a ring, the
 * single-rank case included (there rank 0 is its own neighbour), and
 * broadcasting a command-line parameter read by rank 0.
 *
 * Checks: every rank adds its rank number to the token each time the token
 * passes through it, so after L laps over N ranks the token must equal
 * L * N*(N-1)/2.  Rank 0 verifies this and aborts with error code 1 if it
 * does not; a bad argument makes rank 0 abort with error code 2.
 *
 * Usage: ring [LAPS]    LAPS is a non-negative integer, default 10.
 */
#include <mpi.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define DEFAULT_LAPS 10
#define TOKEN_TAG 1

static void usage_abort(const char *why, const char *arg)
{
    if (arg)
        fprintf(stderr, "ring: %s '%s'\n", why, arg);
    else
        fprintf(stderr, "ring: %s\n", why);
    fprintf(stderr, "usage: ring [LAPS]\n"
            "  LAPS  number of times the token goes round the ring,\n"
            "        a non-negative integer up to %d (default %d)\n", INT_MAX, DEFAULT_LAPS);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static int parse_laps(int argc, char **argv)
{
    char *end;
    long v;

    if (argc < 2)
        return DEFAULT_LAPS;
    if (argc > 2)
        usage_abort("too many arguments, first extra one is", argv[2]);

    errno = 0;
    v = strtol(argv[1], &end, 10);
    if (end == argv[1] || *end != '\0')
        usage_abort("LAPS is not a decimal integer:", argv[1]);
    if (v < 0)
        usage_abort("LAPS must not be negative:", argv[1]);
    if (errno == ERANGE || v > INT_MAX)
        usage_abort("LAPS is too large:", argv[1]);
    return (int) v;
}

int main(int argc, char **argv)
{
    int rank, size, laps = 0;
    /* Unsigned so that an enormous lap count wraps identically in the token
     * and in the expected value instead of being undefined overflow. */
    uint64_t token = 0, expected;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Only rank 0 reads argv: MPI does not promise that the command line
     * reaches the other ranks, and one reader means one error message. */
    if (rank == 0)
        laps = parse_laps(argc, argv);
    MPI_Bcast(&laps, 1, MPI_INT, 0, MPI_COMM_WORLD);

    int next = (rank + 1) % size;
    int prev = (rank + size - 1) % size;

    for (int lap = 0; lap < laps; lap++) {
        if (rank == 0) {
            uint64_t out = token + (uint64_t) rank;
            /* Rank 0 starts each lap, so it must send before it receives.
             * A combined send-receive does both without deadlock, even when
             * it is alone and the message goes to itself. */
            MPI_Sendrecv(&out, 1, MPI_UINT64_T, next, TOKEN_TAG,
                         &token, 1, MPI_UINT64_T, prev, TOKEN_TAG,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&token, 1, MPI_UINT64_T, prev, TOKEN_TAG, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            token += (uint64_t) rank;
            MPI_Send(&token, 1, MPI_UINT64_T, next, TOKEN_TAG, MPI_COMM_WORLD);
        }
    }

    if (rank == 0) {
        expected = (uint64_t) laps * ((uint64_t) size * (uint64_t) (size - 1) / 2);
        if (token != expected) {
            printf("ring: token=%" PRIu64 " after %d laps over %d ranks: FAILED"
                   " (expected %" PRIu64 ")\n", token, laps, size, expected);
            fflush(stdout);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        printf("ring: token=%" PRIu64 " after %d laps over %d ranks: OK\n", token, laps, size);
    }

    MPI_Finalize();
    return 0;
}
