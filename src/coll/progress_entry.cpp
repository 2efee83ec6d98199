// SPDX-License-Identifier: BSD-3-Clause
// The point-to-point and completion calls libhashi-coll interposes so that
// its nonblocking collectives keep moving while the application waits for
// something else: a rank blocked in MPI_Recv may be the one that must pass
// a segment of an MPI_Ibcast on to the rank it waits for.
//
// With no nonblocking collective of ours in flight (the usual case) each
// call goes straight to MPICH after one atomic load. With one in flight,
// the blocking calls wait by polling (the nonblocking form of the call,
// then MPI_Test* and our schedules in turn), and the test calls advance
// our schedules first.
#include "nonblocking.hpp"
#include "runtime.hpp"

#include <mpi.h>

namespace hashi::coll {
namespace {

bool polling()
{
    if (!nonblocking_in_flight())
        return false;
    progress_nonblocking();
    return true;
}

// Polls `test` (returning an MPI error code and setting its flag) until it
// reports completion, advancing our schedules between tries.
template <typename Test> int poll_until(Test&& test)
{
    for (;;) {
        int flag = 0;
        const int err = test(flag);
        if (err != MPI_SUCCESS || flag)
            return err;
        progress_nonblocking();
    }
}

int wait_polling(MPI_Request* request, MPI_Status* status)
{
    return poll_until([&](int& flag) { return PMPI_Test(request, &flag, status); });
}

} // namespace
} // namespace hashi::coll

using namespace hashi::coll;

extern "C" {

int MPI_Wait(MPI_Request* request, MPI_Status* status)
{
    if (!polling())
        return PMPI_Wait(request, status);
    return wait_polling(request, status);
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    if (!polling())
        return PMPI_Waitall(count, requests, statuses);
    return poll_until([&](int& flag) { return PMPI_Testall(count, requests, &flag, statuses); });
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status)
{
    if (!polling())
        return PMPI_Waitany(count, requests, index, status);
    return poll_until([&](int& flag) { return PMPI_Testany(count, requests, index, &flag, status); });
}

int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[])
{
    if (!polling())
        return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
    return poll_until([&](int& flag) {
        const int err = PMPI_Testsome(incount, requests, outcount, indices, statuses);
        flag = *outcount != 0; // MPI_UNDEFINED (no active request) ends it too
        return err;
    });
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status)
{
    polling();
    return PMPI_Test(request, flag, status);
}

int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[])
{
    polling();
    return PMPI_Testall(count, requests, flag, statuses);
}

int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status)
{
    polling();
    return PMPI_Testany(count, requests, index, flag, status);
}

int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[])
{
    polling();
    return PMPI_Testsome(incount, requests, outcount, indices, statuses);
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status)
{
    polling();
    return PMPI_Iprobe(source, tag, comm, flag, status);
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status)
{
    if (!polling())
        return PMPI_Probe(source, tag, comm, status);
    return poll_until([&](int& flag) { return PMPI_Iprobe(source, tag, comm, &flag, status); });
}

int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status)
{
    if (!polling())
        return PMPI_Recv(buf, count, type, source, tag, comm, status);
    MPI_Request r = MPI_REQUEST_NULL;
    const int err = PMPI_Irecv(buf, count, type, source, tag, comm, &r);
    return err != MPI_SUCCESS ? err : wait_polling(&r, status);
}

int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    if (!polling())
        return PMPI_Send(buf, count, type, dest, tag, comm);
    MPI_Request r = MPI_REQUEST_NULL;
    const int err = PMPI_Isend(buf, count, type, dest, tag, comm, &r);
    return err != MPI_SUCCESS ? err : wait_polling(&r, MPI_STATUS_IGNORE);
}

int MPI_Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    if (!polling())
        return PMPI_Ssend(buf, count, type, dest, tag, comm);
    MPI_Request r = MPI_REQUEST_NULL;
    const int err = PMPI_Issend(buf, count, type, dest, tag, comm, &r);
    return err != MPI_SUCCESS ? err : wait_polling(&r, MPI_STATUS_IGNORE);
}

int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
    int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status)
{
    if (!polling())
        return PMPI_Sendrecv(
            sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, status);
    MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int err = PMPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &r[0]);
    if (err == MPI_SUCCESS)
        err = PMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &r[1]);
    if (err != MPI_SUCCESS) {
        if (r[0] != MPI_REQUEST_NULL) {
            PMPI_Cancel(&r[0]);
            PMPI_Request_free(&r[0]);
        }
        return err;
    }
    MPI_Status st[2];
    err = poll_until([&](int& flag) { return PMPI_Testall(2, r, &flag, st); });
    if (status != MPI_STATUS_IGNORE)
        *status = st[0];
    return err == MPI_ERR_IN_STATUS ? (st[0].MPI_ERROR != MPI_SUCCESS ? st[0].MPI_ERROR : st[1].MPI_ERROR) : err;
}

} // extern "C"
