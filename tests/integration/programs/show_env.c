/* SPDX-License-Identifier: BSD-3-Clause */
/* Prints, per rank, the working directory and the variables named on the
 * command line, so tests can check -env, -genv, -genvnone and -wdir. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank;
    char cwd[4096];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (!getcwd(cwd, sizeof cwd)) {
        cwd[0] = '\0';
    }
    printf("rank=%d cwd=%s", rank, cwd);
    for (int i = 1; i < argc; i++) {
        const char *v = getenv(argv[i]);
        printf(" %s=%s", argv[i], v ? v : "<unset>");
    }
    printf("\n");
    MPI_Finalize();
    return 0;
}
