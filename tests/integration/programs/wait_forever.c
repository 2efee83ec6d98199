/* SPDX-License-Identifier: BSD-3-Clause */
/* Every rank prints "ready" and then blocks in a receive nobody matches,
 * so tests can check that signals and timeouts end a stuck job. A SIGTERM
 * is announced on stdout before the rank dies of it, so a test can tell the
 * signal really arrived (and was not blocked). */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char term_msg[64];

static void on_term(int sig)
{
    (void)!write(STDOUT_FILENO, term_msg, strlen(term_msg));
    signal(sig, SIG_DFL);
    raise(sig);
}

int main(int argc, char **argv)
{
    int rank, x;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    snprintf(term_msg, sizeof term_msg, "rank %d got SIGTERM\n", rank);
    signal(SIGTERM, on_term);
    printf("rank %d ready\n", rank);
    fflush(stdout);
    MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
