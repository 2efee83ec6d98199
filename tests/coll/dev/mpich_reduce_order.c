/* SPDX-License-Identifier: BSD-3-Clause */
/* Reproduces a wrong result of MPICH 4.0.2's own PMPI_Reduce: on a
 * communicator whose rank order is not the nodes' order (here
 * MPI_COMM_WORLD reversed by MPI_Comm_split), with ranks spread unevenly
 * over nodes and more than 2 KiB of data, the root's own contribution is
 * missing. Seen with the host list below; 512 ints or fewer, one node,
 * no reversal, or n0:2,n1:2,n2:2,n3:2 or n0:3,n1:1,n2:2,n3:2 give the
 * exact sum.
 * Every rank contributes 1 << rank, so the exact sum is 2^size - 1.
 *
 *   mpiexec -launcher exec -launcher-exec "env X={host}" \
 *       -hosts n0:3,n1:1,n2:2,n3:1,n4:1 -n 8 ./mpich_reduce_order 1000
 *   -> "PMPI_Reduce: 1000 of 1000 wrong (0xfe, exact 0xff)"
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    int world_rank, rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    int count = argc > 1 ? atoi(argv[1]) : 1000;
    if (count < 1)
        count = 1;
    MPI_Comm reversed;
    MPI_Comm_split(MPI_COMM_WORLD, 0, -world_rank, &reversed);
    MPI_Comm_rank(reversed, &rank);
    MPI_Comm_size(reversed, &size);
    int* in = malloc(count * sizeof(int));
    int* out = calloc(count, sizeof(int));
    for (int i = 0; i < count; i++)
        in[i] = 1 << (rank % 30);
    PMPI_Reduce(in, out, count, MPI_INT, MPI_SUM, 0, reversed);
    if (rank == 0) {
        int exact = 0, wrong = 0;
        for (int r = 0; r < size; r++)
            exact += 1 << (r % 30);
        for (int i = 0; i < count; i++)
            wrong += out[i] != exact;
        printf("PMPI_Reduce: %d of %d wrong (%#x, exact %#x)\n", wrong, count, out[0], exact);
    }
    free(in);
    free(out);
    MPI_Comm_free(&reversed);
    MPI_Finalize();
    return 0;
}
