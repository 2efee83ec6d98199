// SPDX-License-Identifier: BSD-3-Clause
// The MPI_* entry points libhashi-coll interposes ahead of libmpi (C, and
// Fortran too: MPICH's Fortran bindings call these C symbols). Each one
// checks it may act, describes the call to the selector and runs the
// chosen algorithm; anything we do not handle, including every malformed
// argument (MPICH reports those best), goes to PMPI_* unchanged.
#include "algorithms.hpp"
#include "hierarchy.hpp"
#include "nonblocking.hpp"
#include "runtime.hpp"
#include "selector.hpp"
#include "settings.hpp"

#include <mpi.h>

#include <cstdio>
#include <exception>
#include <new>
#include <numeric>

namespace hashi::coll {

namespace {

int type_size(MPI_Datatype t)
{
    int s = 0;
    PMPI_Type_size(t, &s);
    return s;
}

bool predefined_op(MPI_Op op)
{
    for (MPI_Op p : {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_BAND, MPI_LOR, MPI_BOR, MPI_LXOR, MPI_BXOR,
             MPI_MINLOC, MPI_MAXLOC, MPI_REPLACE, MPI_NO_OP})
        if (op == p)
            return true;
    return false;
}

// The hierarchy when this call may be ours, else nullptr.
const Hierarchy* eligible(MPI_Comm comm)
{
    if (!active() || comm == MPI_COMM_NULL)
        return nullptr;
    // Our nonblocking collectives in flight advance here too.
    progress_nonblocking();
    return hierarchy_of(comm);
}

// The same for a nonblocking call, which must not block: only a hierarchy
// an earlier collective built will do (else the call goes to MPICH, alike
// on every rank, since they all made the same calls on `comm`).
const Hierarchy* nonblocking_eligible(MPI_Comm comm, MPI_Request* request)
{
    if (!active() || comm == MPI_COMM_NULL || request == nullptr)
        return nullptr;
    progress_nonblocking();
    return cached_hierarchy_of(comm);
}

Call reduction_call(Collective c, double bytes, int count, MPI_Op op)
{
    int commutative = 0;
    PMPI_Op_commutative(op, &commutative);
    return Call {c, bytes, count, commutative != 0, !predefined_op(op)};
}

// Runs an algorithm, turning C++ failures into MPI errors raised on the
// user's communicator (whose error handler decides what happens).
template <typename F> int run(MPI_Comm comm, Collective c, const Choice& choice, F&& algorithm)
{
    int err;
    try {
        err = algorithm(choice.tuning);
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "hashi-coll: error: out of memory for the scratch buffers of %.*s (%s)\n",
            static_cast<int>(name_of(c).size()), name_of(c).data(), choice.algorithm.c_str());
        err = MPI_ERR_NO_MEM;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "hashi-coll: error in %.*s (%s): %s\n", static_cast<int>(name_of(c).size()),
            name_of(c).data(), choice.algorithm.c_str(), e.what());
        err = MPI_ERR_INTERN;
    }
    if (err != MPI_SUCCESS)
        PMPI_Comm_call_errhandler(comm, err);
    return err;
}

// Builds a nonblocking algorithm's schedule and starts it behind *request.
template <typename F>
int start(MPI_Comm comm, Collective c, const Choice& choice, const Hierarchy& h, MPI_Request* request, F&& build)
{
    int err;
    try {
        err = start_nonblocking(build(choice.tuning, next_nonblocking_tag(h)), h, c, choice.algorithm, request);
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "hashi-coll: error: out of memory for the scratch buffers of %.*s (%s)\n",
            static_cast<int>(name_of(c).size()), name_of(c).data(), choice.algorithm.c_str());
        err = MPI_ERR_NO_MEM;
    }
    if (err != MPI_SUCCESS)
        PMPI_Comm_call_errhandler(comm, err);
    return err;
}

// A job of one cluster leaves everything to MPICH (init.cpp), except an
// alltoall of large blocks on one node: MPICH 4.0.2 copies those twice
// through its shared memory, alltoall_cma once. The block size is the same
// on every rank (MPI requires matching signatures), so all build the
// hierarchy (collective) and decide alike.
int single_cluster_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
    MPI_Datatype recvtype, MPI_Comm comm)
{
    const Hierarchy* h = nullptr;
    if (!settings().enabled || comm == MPI_COMM_NULL || sendbuf == MPI_IN_PLACE ||
        double(recvcount) * type_size(recvtype) < kCmaMinBlock || (h = hierarchy_of(comm)) == nullptr ||
        h->nnodes != 1)
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    Choice choice = choose(*h, {Collective::alltoall, double(recvcount) * type_size(recvtype) * h->size, recvcount});
    if (choice.algorithm != "cma")
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    return run(comm, Collective::alltoall, choice, [&](const Tuning&) {
        return algo::alltoall_cma(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, *h);
    });
}

} // namespace
} // namespace hashi::coll

using namespace hashi::coll;

extern "C" {

int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    const Hierarchy* h = nullptr;
    if (count < 0 || type == MPI_DATATYPE_NULL || (h = eligible(comm)) == nullptr || root < 0 || root >= h->size)
        return PMPI_Bcast(buf, count, type, root, comm);
    const Choice choice = choose(*h, {Collective::bcast, double(count) * type_size(type), count});
    if (choice.algorithm == "mpich")
        return PMPI_Bcast(buf, count, type, root, comm);
    return run(comm, Collective::bcast, choice, [&](const Tuning& t) {
        if (choice.algorithm == "leader")
            return algo::bcast_leader(buf, count, type, root, *h, t);
        return algo::bcast_matsuda(buf, count, type, root, *h, t);
    });
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    const Hierarchy* h = nullptr;
    if (count < 0 || type == MPI_DATATYPE_NULL || op == MPI_OP_NULL || (h = eligible(comm)) == nullptr)
        return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
    const Choice choice = choose(*h, reduction_call(Collective::allreduce, double(count) * type_size(type), count, op));
    const std::string& a = choice.algorithm;
    if (a == "mpich")
        return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
    return run(comm, Collective::allreduce, choice, [&](const Tuning& t) {
        if (a == "leader")
            return algo::allreduce_leader(sendbuf, recvbuf, count, type, op, *h, t);
        if (a == "matsuda")
            return algo::allreduce_matsuda(sendbuf, recvbuf, count, type, op, *h, t);
        if (a == "lr_lr")
            return algo::allreduce_lr_lr(sendbuf, recvbuf, count, type, op, *h, t);
        if (a == "lr_rab")
            return algo::allreduce_lr_rab(sendbuf, recvbuf, count, type, op, *h, t);
        if (a == "lr_lr_pipe")
            return algo::allreduce_lr_lr_pipe(sendbuf, recvbuf, count, type, op, *h, t);
        return algo::allreduce_ring(sendbuf, recvbuf, count, type, op, *h, t);
    });
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm)
{
    const Hierarchy* h = nullptr;
    if (count < 0 || type == MPI_DATATYPE_NULL || op == MPI_OP_NULL || (h = eligible(comm)) == nullptr || root < 0 ||
        root >= h->size)
        return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
    const Choice choice = choose(*h, reduction_call(Collective::reduce, double(count) * type_size(type), count, op));
    if (choice.algorithm == "mpich")
        return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
    return run(comm, Collective::reduce, choice,
        [&](const Tuning& t) { return algo::reduce_hier(sendbuf, recvbuf, count, type, op, root, *h, t); });
}

int MPI_Reduce_scatter_block(
    const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    const Hierarchy* h = nullptr;
    if (recvcount < 0 || type == MPI_DATATYPE_NULL || op == MPI_OP_NULL || (h = eligible(comm)) == nullptr)
        return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
    const double bytes = double(recvcount) * type_size(type) * h->size;
    const Choice choice = choose(*h, reduction_call(Collective::reduce_scatter_block, bytes, recvcount, op));
    if (choice.algorithm == "mpich")
        return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
    return run(comm, Collective::reduce_scatter_block, choice,
        [&](const Tuning& t) { return algo::reduce_scatter_block_hier(sendbuf, recvbuf, recvcount, type, op, *h, t); });
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
    MPI_Datatype recvtype, MPI_Comm comm)
{
    const Hierarchy* h = nullptr;
    if (recvcount < 0 || sendcount < 0 || recvtype == MPI_DATATYPE_NULL ||
        (sendbuf != MPI_IN_PLACE && sendtype == MPI_DATATYPE_NULL) || (h = eligible(comm)) == nullptr)
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    const double bytes = double(recvcount) * type_size(recvtype) * h->size;
    const Choice choice = choose(*h, {Collective::allgather, bytes, recvcount});
    if (choice.algorithm == "mpich")
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    return run(comm, Collective::allgather, choice, [&](const Tuning& t) {
        return algo::allgather_hier(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, *h, t);
    });
}

int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
    const int* displs, MPI_Datatype recvtype, MPI_Comm comm)
{
    const Hierarchy* h = nullptr;
    if (sendcount < 0 || recvcounts == nullptr || displs == nullptr || recvtype == MPI_DATATYPE_NULL ||
        (sendbuf != MPI_IN_PLACE && sendtype == MPI_DATATYPE_NULL) || (h = eligible(comm)) == nullptr)
        return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    double total = 0;
    for (int r = 0; r < h->size; ++r) {
        if (recvcounts[r] < 0)
            return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
        total += recvcounts[r];
    }
    const Choice choice = choose(*h, {Collective::allgatherv, total * type_size(recvtype), static_cast<int>(total)});
    if (choice.algorithm == "mpich")
        return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    return run(comm, Collective::allgatherv, choice, [&](const Tuning& t) {
        return algo::allgatherv_hier(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, *h, t);
    });
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
    MPI_Datatype recvtype, MPI_Comm comm)
{
    const Hierarchy* h = nullptr;
    if (recvcount < 0 || sendcount < 0 || recvtype == MPI_DATATYPE_NULL ||
        (sendbuf != MPI_IN_PLACE && sendtype == MPI_DATATYPE_NULL))
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    if (!active())
        return single_cluster_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    if ((h = eligible(comm)) == nullptr)
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    const double bytes = double(recvcount) * type_size(recvtype) * h->size;
    Choice choice = choose(*h, {Collective::alltoall, bytes, recvcount});
    // MPICH 4.0.2's Bruck alltoall divides by zero on the pair types of two
    // different basic types once 8 or more ranks span nodes: ours instead.
    if (choice.algorithm == "mpich" && h->size >= 8 && h->nclusters > 1)
        for (MPI_Datatype pair : {MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT})
            if (recvtype == pair || (sendbuf != MPI_IN_PLACE && sendtype == pair))
                choice.algorithm = "hier";
    if (choice.algorithm == "mpich")
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    if (choice.algorithm == "cma")
        return run(comm, Collective::alltoall, choice, [&](const Tuning&) {
            return algo::alltoall_cma(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, *h);
        });
    return run(comm, Collective::alltoall, choice, [&](const Tuning& t) {
        return algo::alltoall_hier(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, *h, t);
    });
}

int MPI_Alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls, MPI_Datatype sendtype, void* recvbuf,
    const int* recvcounts, const int* rdispls, MPI_Datatype recvtype, MPI_Comm comm)
{
    const Hierarchy* h = nullptr;
    if (recvcounts == nullptr || rdispls == nullptr || recvtype == MPI_DATATYPE_NULL ||
        (sendbuf != MPI_IN_PLACE && (sendcounts == nullptr || sdispls == nullptr || sendtype == MPI_DATATYPE_NULL)) ||
        (h = eligible(comm)) == nullptr)
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    // Counts differ between ranks, so the choice must not depend on them.
    const Choice choice = choose(*h, {Collective::alltoallv, 0, 0});
    if (choice.algorithm == "mpich")
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    return run(comm, Collective::alltoallv, choice, [&](const Tuning& t) {
        return algo::alltoallv_hier(
            sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, *h, t);
    });
}

int MPI_Barrier(MPI_Comm comm)
{
    const Hierarchy* h = eligible(comm);
    if (h == nullptr)
        return PMPI_Barrier(comm);
    const Choice choice = choose(*h, {Collective::barrier, 0, 0});
    if (choice.algorithm == "mpich")
        return PMPI_Barrier(comm);
    return run(comm, Collective::barrier, choice, [&](const Tuning& t) { return algo::barrier_hier(*h, t); });
}

// ---- nonblocking forms ---------------------------------------------------
// Those with an algorithm of ours; the other nonblocking, persistent and
// large-count collectives are not interposed and reach MPICH directly.

int MPI_Ibcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* request)
{
    const Hierarchy* h = nullptr;
    if (count < 0 || type == MPI_DATATYPE_NULL || (h = nonblocking_eligible(comm, request)) == nullptr || root < 0 ||
        root >= h->size)
        return PMPI_Ibcast(buf, count, type, root, comm, request);
    const Choice choice = choose(*h, {Collective::ibcast, double(count) * type_size(type), count});
    if (choice.algorithm == "mpich")
        return PMPI_Ibcast(buf, count, type, root, comm, request);
    return start(comm, Collective::ibcast, choice, *h, request,
        [&](const Tuning& t, int tag) { return algo::ibcast_hier(buf, count, type, root, *h, t, tag); });
}

int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
    MPI_Request* request)
{
    const Hierarchy* h = nullptr;
    if (count < 0 || type == MPI_DATATYPE_NULL || op == MPI_OP_NULL ||
        (h = nonblocking_eligible(comm, request)) == nullptr || root < 0 || root >= h->size)
        return PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, request);
    const Choice choice = choose(*h, reduction_call(Collective::ireduce, double(count) * type_size(type), count, op));
    if (choice.algorithm == "mpich")
        return PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, request);
    return start(comm, Collective::ireduce, choice, *h, request, [&](const Tuning& t, int tag) {
        return algo::ireduce_hier(sendbuf, recvbuf, count, type, op, root, *h, t, tag);
    });
}

int MPI_Iallreduce(
    const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request* request)
{
    const Hierarchy* h = nullptr;
    if (count < 0 || type == MPI_DATATYPE_NULL || op == MPI_OP_NULL ||
        (h = nonblocking_eligible(comm, request)) == nullptr)
        return PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, request);
    const Choice choice =
        choose(*h, reduction_call(Collective::iallreduce, double(count) * type_size(type), count, op));
    if (choice.algorithm == "mpich")
        return PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, request);
    return start(comm, Collective::iallreduce, choice, *h, request,
        [&](const Tuning& t, int tag) { return algo::iallreduce_hier(sendbuf, recvbuf, count, type, op, *h, t, tag); });
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request)
{
    const Hierarchy* h = nonblocking_eligible(comm, request);
    if (h == nullptr)
        return PMPI_Ibarrier(comm, request);
    const Choice choice = choose(*h, {Collective::ibarrier, 0, 0});
    if (choice.algorithm == "mpich")
        return PMPI_Ibarrier(comm, request);
    return start(comm, Collective::ibarrier, choice, *h, request,
        [&](const Tuning&, int tag) { return algo::ibarrier_hier(*h, tag); });
}

} // extern "C"
