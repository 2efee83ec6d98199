# SPDX-License-Identifier: BSD-3-Clause
# src/scash: SCASH, page-based software distributed shared memory over MPI
# (libhashi-scash). Programs include scash.h (or scash.hpp) and link with
# -lhashi-scash; the installed mpicc/mpicxx find both in Hashi's prefix.
# Fortran programs compile $(includedir)/scash.f90 (module scash) with theirs.

lib_LTLIBRARIES += libhashi-scash.la
scashincludedir = $(includedir)
scashinclude_HEADERS = src/scash/scash.h src/scash/scash.hpp src/scash/scash.f90
libhashi_scash_la_SOURCES = \
	src/scash/api.cpp \
	src/scash/runtime.hpp \
	src/scash/region.cpp src/scash/region.hpp \
	src/scash/page_state.hpp \
	src/scash/fault.cpp \
	src/scash/diff.cpp src/scash/diff.hpp \
	src/scash/home.cpp src/scash/home.hpp \
	src/scash/protocol.hpp \
	src/scash/service.cpp \
	src/scash/wait.cpp src/scash/wait.hpp \
	src/scash/release.cpp \
	src/scash/barrier.cpp \
	src/scash/lock.cpp \
	src/scash/stats.cpp src/scash/stats.hpp
libhashi_scash_la_CPPFLAGS = $(AM_CPPFLAGS) $(MPICH_CPPFLAGS)
libhashi_scash_la_CXXFLAGS = $(AM_CXXFLAGS) -pthread
# libmpi is named by its path behind -Wl,: libtool would otherwise follow the base's
# libmpi.la and record the build cache as the library's run path; the
# installed library finds libmpi next to itself ($ORIGIN), as MPICH's own.
libhashi_scash_la_LDFLAGS = -version-info 0:0:0 -no-undefined -pthread \
	-Wl,$(MPICH_BASE)/lib/libmpi.so -Wl,-rpath,'$$ORIGIN' -Wl,--enable-new-dtags
libhashi_scash_la_LIBADD = libhashi_common_pic.la $(HASHI_SANITIZE_LIBS)
EXTRA_libhashi_scash_la_DEPENDENCIES = $(MPICH_STAMP)

## Examples, installed as sources next to the other examples ################
scashexamplesdir = $(docdir)/examples/scash
dist_scashexamples_DATA = examples/scash/README.md examples/scash/lu.c examples/scash/jacobi.c examples/scash/counter.c

## Tests ####################################################################
check_PROGRAMS += tests/scash/scash-unit
tests_scash_scash_unit_SOURCES = tests/scash/test_diff.cpp tests/scash/test_home.cpp src/scash/diff.cpp src/scash/home.cpp
tests_scash_scash_unit_CPPFLAGS = $(AM_CPPFLAGS) -DBOOST_TEST_DYN_LINK
tests_scash_scash_unit_LDADD = -lboost_unit_test_framework
TESTS += tests/scash/scash-unit

SCASH_TESTS = \
	tests/scash/consistency.sh \
	tests/scash/locks.sh \
	tests/scash/migration.sh \
	tests/scash/apps.sh \
	tests/scash/errors.sh \
	tests/scash/clusters.sh \
	tests/scash/stall.sh
TESTS += $(SCASH_TESTS)
EXTRA_DIST += src/scash/README.md $(SCASH_TESTS) tests/scash/lib-scash.sh tests/scash/programs

## Benchmark (bench/scash/run-scash; not run by make check) #################
EXTRA_DIST += bench/scash/run-scash bench/scash/home_move.c bench/scash/README.md
