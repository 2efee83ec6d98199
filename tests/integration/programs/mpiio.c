/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI-IO (ROMIO in the base): every rank writes its block of a shared file
 * with a collective write through a file view, then reads back its
 * neighbour's block independently and checks every value. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define BLOCK 4096

int main(int argc, char **argv)
{
    int rank, size, errors = 0, total = 0;
    MPI_File fh;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *path = argc > 1 ? argv[1] : "mpiio.dat";
    int *buf = malloc(BLOCK * sizeof(int));
    for (int i = 0; i < BLOCK; i++) {
        buf[i] = rank * BLOCK + i;
    }
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_File_set_view(fh, (MPI_Offset)rank * BLOCK * sizeof(int), MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
    MPI_File_write_all(fh, buf, BLOCK, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    int peer = (rank + 1) % size;
    MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
    MPI_File_read_at(fh, (MPI_Offset)peer * BLOCK, buf, BLOCK, MPI_INT, MPI_STATUS_IGNORE);
    for (int i = 0; i < BLOCK; i++) {
        if (buf[i] != peer * BLOCK + i) {
            errors++;
        }
    }
    MPI_Offset fsize = 0;
    MPI_File_get_size(fh, &fsize);
    MPI_File_close(&fh);
    MPI_Reduce(&errors, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("mpiio: %d ranks, file size %lld bytes, %d wrong values: %s\n", size, (long long)fsize, total,
               total == 0 && fsize == (MPI_Offset)size * BLOCK * (MPI_Offset)sizeof(int) ? "OK" : "FAILED");
    }
    free(buf);
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
