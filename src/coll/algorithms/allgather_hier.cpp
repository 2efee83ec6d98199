// SPDX-License-Identifier: BSD-3-Clause
// Hierarchical allgather: the allgatherv of allgatherv_hier.cpp with equal
// blocks. Displacements are kept in MPI_Aint, so a result of more than
// INT_MAX elements (which an allgatherv could not describe) works too.
#include "../algorithms.hpp"

#include <mpi.h>

#include <vector>

namespace hashi::coll::algo {

namespace detail {
// In allgatherv_hier.cpp.
int gather_bytes(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
    const std::vector<MPI_Count>& counts, const std::vector<MPI_Aint>& displs, MPI_Datatype recvtype,
    const Hierarchy& h, const Tuning& t);
} // namespace detail

int allgather_hier(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
    MPI_Datatype recvtype, const Hierarchy& h, const Tuning& t)
{
    std::vector<MPI_Count> counts(h.size, recvcount);
    std::vector<MPI_Aint> displs(h.size);
    for (int r = 0; r < h.size; ++r)
        displs[r] = static_cast<MPI_Aint>(r) * recvcount;
    return detail::gather_bytes(sendbuf, sendcount, sendtype, recvbuf, counts, displs, recvtype, h, t);
}

} // namespace hashi::coll::algo
