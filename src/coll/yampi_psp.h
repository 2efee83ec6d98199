/* SPDX-License-Identifier: BSD-3-Clause */
/* GridMPI's "traffic control using MPI attributes" (Takano et al., IEEE
 * Cluster 2007), kept so that a GridMPI program's pacing calls work with
 * Hashi: include this after mpi.h.
 *
 *   MPI_Comm_set_attr(comm, YAMPI_PSP_MAXRATE, (void *)(intptr_t)kbytes_per_s);
 *       the WAN bandwidth B the job shares, in KB/s (1 KB = 1000 bytes);
 *       every process then sends over the WAN at B / the concurrent senders
 *       (HASHI_WAN_SENDERS, or the processes of its cluster).
 *   MPI_Comm_set_attr(comm, YAMPI_PSP_MATB, (void *)(intptr_t)kbytes_per_s);
 *       this process's own rate (the maximum allowable transmission
 *       bandwidth), KB/s; 0 lifts the limit.
 *   psp_set_limit(comm, n);
 *       MATB = MAXRATE / n, as GridMPI's helper.
 * MPI_Attr_put works the same. The value is the number itself, cast to a
 * pointer (the attribute is also stored, so MPI_Comm_get_attr returns it).
 * The rate is the process's, whatever the communicator: it applies to all
 * its connections to other clusters (libhashi-coll's src/coll/README.md). */
#ifndef HASHI_YAMPI_PSP_H
#define HASHI_YAMPI_PSP_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

extern int YAMPI_PSP_MAXRATE; /* attribute keys, valid after MPI_Init */
extern int YAMPI_PSP_MATB;
int psp_set_limit(MPI_Comm comm, int n);

#ifdef __cplusplus
}
#endif

#endif
