/* SPDX-License-Identifier: BSD-3-Clause */
/* Prints where each rank runs as MPI sees it: the node-local communicator
 * size (from PMI_process_mapping), the HASHI_NODE_NAME mpiexec gave it, and
 * a value from the launcher template; then checks an Allreduce across all
 * ranks so traffic between "nodes" goes through the libfabric provider. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, node_size, node_rank;
    MPI_Comm node;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    MPI_Comm_rank(node, &node_rank);
    const char *name = getenv("HASHI_NODE_NAME");
    const char *tmpl = getenv("HASHI_TEST_TEMPLATE_HOST");
    long mine = rank + 1, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    printf("rank=%d node=%s template=%s node_size=%d node_rank=%d sum=%ld\n", rank, name ? name : "-",
           tmpl ? tmpl : "-", node_size, node_rank, sum);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return sum == (long)size * (size + 1) / 2 ? 0 : 1;
}
