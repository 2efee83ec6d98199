// SPDX-License-Identifier: BSD-3-Clause
//
// hello.cxx - the smallest useful MPI program, in C++.
//
// Demonstrates calling the MPI C API from C++ (the C++ bindings were removed
// from the MPI standard in MPI-3).  Checks that every rank really took part:
// each rank contributes 1 to a sum-reduction, and rank 0 aborts with error
// code 1 unless the sum equals the number of ranks.

// Only the C API is used, so keep mpi.h from pulling in the deprecated C++
// binding headers; the program then needs nothing beyond the C library.
#define MPICH_SKIP_MPICXX 1
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>

#include <iostream>
#include <string>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);

    int rank = 0, size = 0, namelen = 0;
    char host[MPI_MAX_PROCESSOR_NAME];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(host, &namelen);

    // std::endl flushes, so the greeting is out before rank 0 might abort.
    std::cout << "Hello from rank " << rank << " of " << size << " on "
              << std::string(host, static_cast<std::string::size_type>(namelen))
              << " (C++)" << std::endl;

    int one = 1, answered = 0;
    MPI_Reduce(&one, &answered, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (answered != size) {
            std::cerr << "hello: expected " << size << " ranks, but " << answered
                      << " answered" << std::endl;
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        std::cout << "hello: " << answered << " ranks answered" << std::endl;
    }

    MPI_Finalize();
    return 0;
}
