// SPDX-License-Identifier: BSD-3-Clause
// Alltoall on one node by single copy: every rank publishes its pid and the
// address of its send buffer, then reads the block meant for it straight out
// of every other rank's memory with process_vm_readv (Linux cross-memory
// attach, CMA), and a closing allreduce keeps every send buffer alive until
// all have read.
//
// Why: MPICH 4.0.2's shared memory (ch4 posix) has no single-copy path but
// XPMEM, an out-of-tree kernel module Debian does not ship, so a large
// message crosses the node through its cells: two copies, each cell handed
// over by both processes' progress loops, which on an oversubscribed node
// (4 ranks on 2 cores) waits for the peer to be scheduled for every cell.
// Debian's own MPICH (ch4:ucx) moves the same blocks through UCX's CMA
// transport; measured here (bench/fft/run-fft, 4 ranks, 8 MiB blocks),
// ours took 2 to 8 times as long before this algorithm.
//
// Only where it is correct and possible: every rank of the communicator on
// one node (MPICH's shared-memory view, Hierarchy::nnodes), contiguous
// datatypes, not in place; otherwise, or when the kernel refuses the read
// on any rank (another user, Yama's ptrace_scope, a pid namespace), every
// rank falls back to MPICH's alltoall together.
#include "../algorithms.hpp"

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

namespace hashi::coll::algo {

namespace {

// Where a rank's blocks are: the same on every rank after the exchange.
struct Published {
    std::uint64_t pid;
    std::uint64_t sendbuf; // address in that rank's memory
    std::uint64_t usable; // 1 when this rank can take part
};

// A datatype whose `count` elements are `count * size` bytes in a row from
// the buffer's address (lower bound 0, no holes, extent equal to size).
bool contiguous(MPI_Datatype type, MPI_Count& size)
{
    MPI_Count lb = 0, extent = 0, true_lb = 0, true_extent = 0;
    if (PMPI_Type_size_c(type, &size) != MPI_SUCCESS || PMPI_Type_get_extent_c(type, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent_c(type, &true_lb, &true_extent) != MPI_SUCCESS)
        return false;
    return lb == 0 && true_lb == 0 && extent == size && true_extent == size;
}

// Reads `len` bytes at `remote` in process `pid` into `local`; false when
// the kernel refuses or the process is gone (errno says why).
bool read_from(pid_t pid, void* local, std::uint64_t remote, std::size_t len)
{
    auto* out = static_cast<char*>(local);
    while (len > 0) {
        iovec l {out, len};
        iovec r {reinterpret_cast<void*>(static_cast<std::uintptr_t>(remote)), len};
        const ssize_t n = ::process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        out += n;
        remote += static_cast<std::uint64_t>(n);
        len -= static_cast<std::size_t>(n);
    }
    return true;
}

} // namespace

int alltoall_cma(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
    MPI_Datatype recvtype, const Hierarchy& h)
{
    const auto mpich = [&] { return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, h.comm); };
    // The same on every rank: one node, the send side given.
    if (h.nnodes != 1 || sendbuf == MPI_IN_PLACE)
        return mpich();
    MPI_Count ssize = 0, rsize = 0;
    const bool mine = contiguous(sendtype, ssize) && contiguous(recvtype, rsize) && ssize * sendcount == rsize * recvcount;
    const auto block = static_cast<std::size_t>(rsize * recvcount);

    Published me {static_cast<std::uint64_t>(::getpid()), reinterpret_cast<std::uintptr_t>(sendbuf), mine ? 1u : 0u};
    std::vector<Published> all(h.size);
    if (int rc = PMPI_Allgather(&me, sizeof me, MPI_BYTE, all.data(), sizeof me, MPI_BYTE, h.comm); rc != MPI_SUCCESS)
        return rc;
    for (const Published& p : all)
        if (!p.usable)
            return mpich(); // some rank's types are not contiguous: all fall back
    if (block == 0)
        return MPI_SUCCESS;

    // Each rank starts with a different source, so that no sender's pages
    // are read by every rank at once.
    int ok = 1;
    for (int i = 0; i < h.size && ok; ++i) {
        const int src = (h.rank + i) % h.size;
        char* dst = static_cast<char*>(recvbuf) + static_cast<std::size_t>(src) * block;
        const std::uint64_t at = all[src].sendbuf + static_cast<std::uint64_t>(h.rank) * block;
        if (src == h.rank)
            std::memmove(dst, reinterpret_cast<const void*>(static_cast<std::uintptr_t>(at)), block);
        else
            ok = read_from(static_cast<pid_t>(all[src].pid), dst, at, block) ? 1 : 0;
    }
    // Nobody returns (and may change or free its send buffer) before every
    // rank has read; and if any read was refused, all redo it MPICH's way
    // (the send buffers are untouched, the receive buffers rewritten).
    int all_ok = 0;
    if (int rc = PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, h.comm); rc != MPI_SUCCESS)
        return rc;
    return all_ok ? MPI_SUCCESS : mpich();
}

} // namespace hashi::coll::algo
