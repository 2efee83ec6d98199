// SPDX-License-Identifier: BSD-3-Clause
// Hierarchical alltoall: the alltoallv algorithm (alltoallv_hier.cpp: every
// block crosses the WAN once, from at most t.wan_senders lanes per cluster,
// intra-cluster blocks directly) with every block the same size.
//
// Blocks are described as one element of a contiguous type of `count`
// elements, so displacement d is block d whatever P * count is: plain
// element displacements would overflow int for large buffers.
#include "../algorithms.hpp"

#include <mpi.h>

#include <vector>

namespace hashi::coll::algo {

namespace {

// A committed type of `count` consecutive `type` elements, freed on scope exit.
class BlockType {
public:
    BlockType(int count, MPI_Datatype type)
    {
        rc_ = PMPI_Type_contiguous(count, type, &type_);
        if (rc_ == MPI_SUCCESS)
            rc_ = PMPI_Type_commit(&type_);
    }
    ~BlockType()
    {
        if (type_ != MPI_DATATYPE_NULL)
            PMPI_Type_free(&type_);
    }
    BlockType(const BlockType&) = delete;
    BlockType& operator=(const BlockType&) = delete;
    int error() const { return rc_; }
    MPI_Datatype type() const { return type_; }

private:
    MPI_Datatype type_ = MPI_DATATYPE_NULL;
    int rc_ = MPI_SUCCESS;
};

} // namespace

int alltoall_hier(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
    MPI_Datatype recvtype, const Hierarchy& h, const Tuning& t)
{
    const bool in_place = sendbuf == MPI_IN_PLACE;
    if (recvcount < 0 || (!in_place && sendcount < 0))
        return MPI_ERR_COUNT;
    // Every rank moves blocks of the same signature, so when this rank's are
    // empty every rank's are: nothing to do anywhere.
    MPI_Count bytes = 0;
    if (int rc = PMPI_Type_size_c(recvtype, &bytes); rc != MPI_SUCCESS)
        return rc;
    if (bytes * recvcount == 0)
        return MPI_SUCCESS;

    BlockType rblock(recvcount, recvtype);
    if (rblock.error() != MPI_SUCCESS)
        return rblock.error();
    // In place, MPI ignores the send arguments: no send block to build.
    BlockType sblock(in_place ? 0 : sendcount, in_place ? MPI_BYTE : sendtype);
    if (sblock.error() != MPI_SUCCESS)
        return sblock.error();

    std::vector<int> ones(h.size, 1), displs(h.size);
    for (int i = 0; i < h.size; ++i)
        displs[i] = i;
    return alltoallv_hier(
        sendbuf, ones.data(), displs.data(), sblock.type(), recvbuf, ones.data(), displs.data(), rblock.type(), h, t);
}

} // namespace hashi::coll::algo
