// SPDX-License-Identifier: BSD-3-Clause
// Helpers for cutting a buffer of `count` elements of any datatype into
// pieces and for allocating scratch space for them. Algorithms address
// data in whole elements (element i starts at buf + i * extent), so they
// work for derived datatypes with holes and lower bounds too.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <utility>

namespace hashi::coll {

struct TypeInfo {
    MPI_Aint extent = 0;
    MPI_Aint lb = 0;
    MPI_Aint true_lb = 0;
    MPI_Aint true_extent = 0;
    int size = 0; // bytes of data in one element (MPI_Type_size)
};

TypeInfo type_info(MPI_Datatype type);

// Element `i` of a buffer of `type` elements.
inline void* element(void* buf, const TypeInfo& t, MPI_Aint i)
{
    return static_cast<char*>(buf) + i * t.extent;
}
inline const void* element(const void* buf, const TypeInfo& t, MPI_Aint i)
{
    return static_cast<const char*>(buf) + i * t.extent;
}

// Piece i of `count` elements cut into `parts` nearly equal pieces: the
// first count % parts pieces get one element more. Returns [begin, end).
inline std::pair<int, int> piece(int count, int parts, int i)
{
    const int base = count / parts, extra = count % parts;
    const int begin = i * base + (i < extra ? i : extra);
    return {begin, begin + base + (i < extra ? 1 : 0)};
}

// Scratch space for `count` elements of `type`, laid out as a user buffer
// would be (so element(data(), t, i) and MPI calls with `type` work).
class Scratch {
public:
    Scratch() = default;
    Scratch(MPI_Datatype type, MPI_Aint count);
    void* data() const { return base_; }
    explicit operator bool() const { return storage_ != nullptr; }

private:
    std::unique_ptr<char[]> storage_;
    void* base_ = nullptr;
};

// True when the bytes of `type`, as MPI packs them, are its bytes in
// memory without holes (no packing needed for byte ranges of a message).
bool bytes_are_memory(MPI_Datatype type);

// Copies `count` elements of `type` from src to dst (both laid out as
// user buffers of `type`), through MPI so holes in the type are kept.
int copy_elements(const void* src, void* dst, MPI_Aint count, MPI_Datatype type);

} // namespace hashi::coll
