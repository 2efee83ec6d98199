// SPDX-License-Identifier: BSD-3-Clause
#include "datatype.hpp"

#include <stdexcept>
#include <vector>

namespace hashi::coll {

TypeInfo type_info(MPI_Datatype type)
{
    TypeInfo t;
    PMPI_Type_get_extent(type, &t.lb, &t.extent);
    PMPI_Type_get_true_extent(type, &t.true_lb, &t.true_extent);
    PMPI_Type_size(type, &t.size);
    return t;
}

Scratch::Scratch(MPI_Datatype type, MPI_Aint count)
{
    if (count <= 0)
        return;
    const TypeInfo t = type_info(type);
    // The span of `count` elements: the first element's true extent plus
    // one extent per further element (a negative extent is folded in by
    // taking the span from both ends).
    const MPI_Aint span = t.true_extent + (count - 1) * (t.extent < 0 ? -t.extent : t.extent);
    storage_.reset(new char[static_cast<std::size_t>(span > 0 ? span : 1)]);
    // Shift so that the true lower bound of element 0 lands on storage_;
    // with a negative extent, elements grow downwards from the top.
    MPI_Aint shift = -t.true_lb;
    if (t.extent < 0)
        shift += (count - 1) * -t.extent;
    base_ = storage_.get() + shift;
}

int copy_elements(const void* src, void* dst, MPI_Aint count, MPI_Datatype type)
{
    if (count <= 0 || src == dst)
        return MPI_SUCCESS;
    // A local sendrecv copies with the type's layout on both sides; MPICH
    // does it without the network.
    return PMPI_Sendrecv(src, static_cast<int>(count), type, 0, 0, dst, static_cast<int>(count), type, 0, 0,
        MPI_COMM_SELF, MPI_STATUS_IGNORE);
}

// True when the bytes of `type`, as MPI packs them, are its bytes in
// memory without holes: then a byte range of a message is a byte range of
// the buffer and no packing is needed.
bool bytes_are_memory(MPI_Datatype type)
{
    const TypeInfo ti = type_info(type);
    if (ti.size != ti.extent || ti.true_extent != ti.size)
        return false;
    int ni = 0, na = 0, nd = 0, combiner = 0;
    PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner);
    if (combiner == MPI_COMBINER_NAMED)
        return true;
    if (combiner != MPI_COMBINER_DUP && combiner != MPI_COMBINER_CONTIGUOUS)
        return false;
    // A duplicate or a contiguous run of a type whose bytes are in memory
    // order has its bytes in memory order too.
    std::vector<int> ints(ni);
    std::vector<MPI_Aint> addrs(na);
    std::vector<MPI_Datatype> types(nd);
    PMPI_Type_get_contents(type, ni, na, nd, ints.data(), addrs.data(), types.data());
    const bool inner = bytes_are_memory(types[0]);
    PMPI_Type_get_envelope(types[0], &ni, &na, &nd, &combiner);
    if (combiner != MPI_COMBINER_NAMED)
        PMPI_Type_free(&types[0]);
    return inner;
}

} // namespace hashi::coll
