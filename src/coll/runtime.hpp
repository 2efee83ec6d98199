// SPDX-License-Identifier: BSD-3-Clause
// Process-wide state of the interposer, set at MPI_Init (init.cpp).
#pragma once

namespace hashi::coll {

// True between our MPI_Init and MPI_Finalize when Hashi's collectives may
// run: HASHI_COLL is not off, and the job spans several clusters or an
// algorithm is forced. Otherwise every call goes straight to MPICH.
bool active();

} // namespace hashi::coll
