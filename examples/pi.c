/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pi.c - compute pi as the integral of 4/(1+x^2) over [0,1].
 *
 * Demonstrates splitting a loop across ranks (interval i goes to rank
 * i mod N), combining partial results with MPI_Reduce and timing with
 * MPI_Wtime.
 *
 * Checks: the midpoint rule with n intervals has an error of about
 * 1/(12 n^2), so for the default n the result must be within 1e-10 of
 * M_PI.  Rank 0 prints OK, or FAILED and aborts with error code 1.  n
 * below about 30000 is too coarse to meet that bound and reports FAILED
 * by design.  A bad argument makes rank 0 abort with error code 2.
 *
 * Usage: pi [INTERVALS]    INTERVALS is a positive integer, default 10000000.
 */
#include <mpi.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef M_PI
/* Strict ISO C modes hide M_PI. */
#define M_PI 3.14159265358979323846
#endif

#define DEFAULT_INTERVALS 10000000LL
#define TOLERANCE 1e-10
/* Far beyond any feasible run, and keeps i += size from overflowing. */
#define MAX_INTERVALS (1LL << 62)

static void usage_abort(const char *why, const char *arg)
{
    if (arg)
        fprintf(stderr, "pi: %s '%s'\n", why, arg);
    else
        fprintf(stderr, "pi: %s\n", why);
    fprintf(stderr, "usage: pi [INTERVALS]\n"
            "  INTERVALS  number of integration intervals, 1..%lld\n"
            "             (default %lld; below about 30000 the result cannot\n"
            "             reach the %g accuracy that is checked)\n",
            MAX_INTERVALS, DEFAULT_INTERVALS, TOLERANCE);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static long long parse_intervals(int argc, char **argv)
{
    char *end;
    long long v;

    if (argc < 2)
        return DEFAULT_INTERVALS;
    if (argc > 2)
        usage_abort("too many arguments, first extra one is", argv[2]);

    errno = 0;
    v = strtoll(argv[1], &end, 10);
    if (end == argv[1] || *end != '\0')
        usage_abort("INTERVALS is not a decimal integer:", argv[1]);
    if (v <= 0)
        usage_abort("INTERVALS must be positive:", argv[1]);
    if (errno == ERANGE || v > MAX_INTERVALS)
        usage_abort("INTERVALS is too large:", argv[1]);
    return v;
}

int main(int argc, char **argv)
{
    int rank, size;
    long long n = 0;
    double start, elapsed, h, sum = 0.0, carry = 0.0, mypi, pi = 0.0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Only rank 0 reads argv: MPI does not promise that the command line
     * reaches the other ranks, and one reader means one error message. */
    if (rank == 0)
        n = parse_intervals(argc, argv);
    MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);

    /* Start everyone together so the time measures the computation, not
     * the spread in start-up times. */
    MPI_Barrier(MPI_COMM_WORLD);
    start = MPI_Wtime();

    h = 1.0 / (double) n;
    for (long long i = rank; i < n; i += size) {
        double x = h * ((double) i + 0.5);
        /* Compensated (Kahan) summation: with millions of terms plain
         * summation would add rounding error comparable to the tolerance,
         * and the check is meant to judge the integration, not the
         * additions. */
        double term = 4.0 / (1.0 + x * x) - carry;
        double t = sum + term;
        carry = (t - sum) - term;
        sum = t;
    }
    mypi = h * sum;

    MPI_Reduce(&mypi, &pi, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    /* The root cannot finish the reduction before every rank has
     * contributed, so its clock covers the slowest rank. */
    elapsed = MPI_Wtime() - start;

    if (rank == 0) {
        double error = pi - M_PI;
        int ok = fabs(error) < TOLERANCE;

        printf("pi: %.16f  error %+.3e  %lld intervals on %d ranks  wall time %.6f s: %s\n",
               pi, error, n, size, elapsed, ok ? "OK" : "FAILED");
        if (!ok) {
            fflush(stdout);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }

    MPI_Finalize();
    return 0;
}
