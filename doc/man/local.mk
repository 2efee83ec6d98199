# SPDX-License-Identifier: BSD-3-Clause
# Manual pages of Hashi's own programs (share/man/man1), written in roff.
# The wrappers' other names and mpirun are one-line .so pages, as Debian
# ships aliases. MPICH's man3 pages of the MPI functions are installed with
# the base (src/mpi/local.mk).
dist_man1_MANS = \
	doc/man/mpiexec.1 doc/man/mpirun.1 \
	doc/man/mpicc.1 doc/man/mpicxx.1 doc/man/mpic++.1 doc/man/mpifort.1 doc/man/mpif77.1 doc/man/mpif90.1 \
	doc/man/impi-server.1 doc/man/impi-relay.1 \
	doc/man/hashi-info.1 doc/man/hashi-testbed.1 doc/man/hashi-grid-run.1
