# SPDX-License-Identifier: BSD-3-Clause
# src/coll: libhashi-coll, Hashi's topology- and WAN-aware collectives. A
# PMPI interposer: Hashi's compiler wrappers link it ahead of libmpi, so
# the MPI_* collectives of C and Fortran programs come here first (see
# src/coll/README.md).

lib_LTLIBRARIES += libhashi-coll.la
libhashi_coll_la_SOURCES = \
	src/coll/pmpi_entry.cpp \
	src/coll/progress_entry.cpp \
	src/coll/init.cpp src/coll/runtime.hpp \
	src/coll/settings.cpp src/coll/settings.hpp \
	src/coll/collective.cpp src/coll/collective.hpp \
	src/coll/hierarchy.cpp src/coll/hierarchy.hpp \
	src/coll/datatype.cpp src/coll/datatype.hpp \
	src/coll/selector.cpp src/coll/selector.hpp \
	src/coll/cost_model.cpp src/coll/cost_model.hpp \
	src/coll/link_params.cpp src/coll/link_params.hpp \
	src/coll/probe.cpp src/coll/tcp_retransmits.cpp src/coll/tcp_retransmits.hpp \
	src/coll/pacing.cpp src/coll/pacing.hpp src/common/abi/wan_share_abi.h \
	src/coll/hints.cpp src/coll/yampi_psp.h \
	src/coll/schedule.cpp src/coll/schedule.hpp \
	src/coll/nonblocking.cpp src/coll/nonblocking.hpp \
	src/coll/tuning.hpp \
	src/coll/algorithms.hpp \
	$(COLL_ALGORITHMS)
# One algorithm per file (the list the algorithm authors extend).
COLL_ALGORITHMS = \
	src/coll/algorithms/bcast_leader.cpp \
	src/coll/algorithms/bcast_matsuda.cpp \
	src/coll/algorithms/allgather_hier.cpp \
	src/coll/algorithms/allgatherv_hier.cpp \
	src/coll/algorithms/barrier_hier.cpp \
	src/coll/algorithms/allreduce_leader.cpp \
	src/coll/algorithms/allreduce_matsuda.cpp \
	src/coll/algorithms/allreduce_lr_lr.cpp \
	src/coll/algorithms/allreduce_lr_rab.cpp \
	src/coll/algorithms/allreduce_lr_lr_pipe.cpp \
	src/coll/algorithms/allreduce_ring.cpp \
	src/coll/algorithms/ring_blocks.cpp src/coll/algorithms/ring_blocks.hpp \
	src/coll/algorithms/reduce_hier.cpp \
	src/coll/algorithms/reduce_scatter_block_hier.cpp \
	src/coll/algorithms/alltoall_hier.cpp \
	src/coll/algorithms/alltoall_cma.cpp \
	src/coll/algorithms/alltoallv_hier.cpp \
	src/coll/algorithms/cluster_tree.cpp src/coll/algorithms/cluster_tree.hpp \
	src/coll/algorithms/cluster_reduce.cpp src/coll/algorithms/cluster_reduce.hpp \
	src/coll/algorithms/ibcast_hier.cpp \
	src/coll/algorithms/ireduce_hier.cpp \
	src/coll/algorithms/iallreduce_hier.cpp \
	src/coll/algorithms/ibarrier_hier.cpp
# HAVE_VISIBILITY makes mpi.h declare the MPI_* functions with default
# visibility, so our definitions of them are exported despite the flag below.
libhashi_coll_la_CPPFLAGS = $(AM_CPPFLAGS) $(MPICH_CPPFLAGS) -I$(top_srcdir)/src/coll -DHAVE_VISIBILITY=1
# Only the MPI_* entry points and the WAN share record are exported.
libhashi_coll_la_CXXFLAGS = $(AM_CXXFLAGS) -fvisibility=hidden
# As libhashi-scash: libmpi by path, found next to the library at run time.
libhashi_coll_la_LDFLAGS = -version-info 0:0:0 -no-undefined \
	-Wl,$(MPICH_BASE)/lib/libmpi.so -Wl,-rpath,'$$ORIGIN' -Wl,--enable-new-dtags
libhashi_coll_la_LIBADD = libhashi_common_pic.la $(HASHI_SANITIZE_LIBS)
EXTRA_libhashi_coll_la_DEPENDENCIES = $(MPICH_STAMP)
EXTRA_DIST += src/coll/README.md
# GridMPI's pacing attributes (hints.cpp).
collincludedir = $(includedir)
collinclude_HEADERS = src/coll/yampi_psp.h

## Unit tests of the parts that need no running job (Boost.Test) ###########
check_PROGRAMS += tests/unit/coll-unit
tests_unit_coll_unit_SOURCES = \
	tests/unit/coll/main.cpp \
	tests/unit/coll/test_settings.cpp \
	tests/unit/coll/test_cost_model.cpp \
	tests/unit/coll/test_layout.cpp \
	tests/unit/coll/test_cluster_tree.cpp \
	tests/unit/coll/test_selector.cpp \
	tests/unit/coll/test_congestion.cpp tests/unit/coll/two_by_four.hpp \
	src/coll/selector.cpp \
	src/coll/algorithms/cluster_tree.cpp \
	src/coll/settings.cpp \
	src/coll/collective.cpp \
	src/coll/cost_model.cpp \
	src/coll/link_params.cpp \
	src/coll/hierarchy.cpp
tests_unit_coll_unit_CPPFLAGS = $(AM_CPPFLAGS) $(MPICH_CPPFLAGS) -I$(top_srcdir)/src/coll -DBOOST_TEST_DYN_LINK
tests_unit_coll_unit_LDADD = libhashi_common.a -lboost_unit_test_framework $(MPICH_LIBS)
tests_unit_coll_unit_LDFLAGS = -Wl,-rpath,$(MPICH_BASE)/lib
EXTRA_tests_unit_coll_unit_DEPENDENCIES = $(MPICH_STAMP)
TESTS += tests/unit/coll-unit
