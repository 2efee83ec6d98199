/* SPDX-License-Identifier: BSD-3-Clause */
/* A rank of a job started under Slurm: checks it got the size the test
 * expects (argv[1]) and that the ranks are 0..size-1, each once (the sum and
 * the product of rank+1 over all ranks), and prints what Slurm told it (the
 * job and step it runs in), so the test sees each rank was an srun step of
 * the allocation. Exits 1 when a check fails. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, ok;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int expected = argc > 1 ? atoi(argv[1]) : -1;
    long mine[2] = {rank + 1, rank + 1}, sum[2] = {0, 0};
    MPI_Allreduce(&mine[0], &sum[0], 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&mine[1], &sum[1], 1, MPI_LONG, MPI_PROD, MPI_COMM_WORLD);
    long factorial = 1;
    for (int i = 2; i <= size; ++i)
        factorial *= i;
    ok = size == expected && sum[0] == (long)size * (size + 1) / 2 && sum[1] == factorial;
    const char *job = getenv("SLURM_JOB_ID"), *step = getenv("SLURM_STEP_ID");
    printf("rank=%d size=%d expected=%d job=%s step=%s %s\n", rank, size, expected, job ? job : "-",
           step ? step : "-", ok ? "ok" : "WRONG");
    MPI_Finalize();
    return ok ? 0 : 1;
}
