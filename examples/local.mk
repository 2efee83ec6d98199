# SPDX-License-Identifier: BSD-3-Clause
# The examples are user programs: installed as sources, compiled and run by
# the test suite with the installed mpicc/mpicxx/mpifort.
examplesdir = $(docdir)/examples
dist_examples_DATA = \
	examples/README.md examples/hello.c examples/hello.cxx examples/hello_f77.f examples/hello_f90.f90 \
	examples/ring.c examples/pi.c examples/isort.c
