// SPDX-License-Identifier: BSD-3-Clause
// Runs a nonblocking collective's Schedule behind an MPI request.
//
// The request is an MPICH extended generalized request (MPIX_Grequest):
// MPICH calls our poll function whenever the application tests or waits
// on it (MPI_Test/Wait and their -all/-any/-some forms), with its own lock
// released, and the schedule then posts what it can and collects what
// finished. Every MPI call libhashi-coll interposes advances all schedules
// in flight too: our collectives when they start, and the point-to-point
// and completion calls (progress_entry.cpp), which while a schedule is in
// flight wait by polling instead of blocking inside MPICH.
//
// There is no progress thread: like MPICH's own nonblocking collectives,
// ours advance inside MPI calls, and a rank that forwards data for others
// (an inner node of a tree) forwards inside those calls. Unlike MPICH's,
// they do not advance while the process is blocked inside a blocking
// collective or a call we do not interpose (MPI-IO, one-sided,
// communicator creation): src/coll/README.md says what that means for
// programs.
#pragma once

#include "collective.hpp"
#include "hierarchy.hpp"
#include "schedule.hpp"

#include <mpi.h>

#include <memory>
#include <string>

namespace hashi::coll {

// The tag of the next nonblocking collective on h (h.nb_comm), the same on
// every rank.
int next_nonblocking_tag(const Hierarchy& h);

// Starts `schedule` (messages on h.nb_comm) and returns its request. The
// hierarchy stays pinned until the schedule is done.
int start_nonblocking(
    std::unique_ptr<Schedule> schedule, const Hierarchy& h, Collective c, std::string algorithm, MPI_Request* request);

// Advances every nonblocking collective in flight in this process (cheap
// when there is none).
void progress_nonblocking();

// True while some nonblocking collective of ours is in flight here.
bool nonblocking_in_flight();

} // namespace hashi::coll
