/* SPDX-License-Identifier: BSD-3-Clause */
/* Prints, per rank, the job key it was given and whether IMPI credentials
 * leaked into its environment, then waits argv[1] seconds (so a test can
 * look at every process's command line meanwhile) and checks that all
 * ranks agree on the key through an MPI reduction. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *key = getenv("HASHI_JOB_KEY");
    const char *secret = getenv("HASHI_IMPI_SECRET");
    const char *pmi_port = getenv("PMI_PORT");
    const char *job = getenv("HASHI_JOB_ID");
    printf("rank=%d size=%d key=%s impi_secret=%s pmi_port=%s job=%s\n", rank, size, key ? key : "<unset>",
           secret ? secret : "<unset>", pmi_port ? pmi_port : "<unset>", job ? job : "<unset>");
    fflush(stdout);
    if (argc > 1) {
        sleep((unsigned)atoi(argv[1]));
    }
    /* Same key everywhere: the byte-wise max and min of all keys agree. */
    unsigned char mine[64] = {0}, hi[64], lo[64];
    if (key) {
        strncpy((char *)mine, key, sizeof mine);
    }
    MPI_Allreduce(mine, hi, 64, MPI_UNSIGNED_CHAR, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(mine, lo, 64, MPI_UNSIGNED_CHAR, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("keys %s\n", memcmp(hi, lo, sizeof hi) == 0 ? "agree" : "differ");
    }
    MPI_Finalize();
    return 0;
}
