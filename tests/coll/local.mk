# SPDX-License-Identifier: BSD-3-Clause
# tests/coll: correctness of libhashi-coll. The scripts compile their
# programs at run time with the installed wrappers (as
# tests/integration/examples.sh does) and run them across fake clusters.
COLL_TESTS = \
	tests/coll/collectives.sh \
	tests/coll/interposer.sh \
	tests/coll/pacing-hints.sh
TESTS += $(COLL_TESTS)
EXTRA_DIST += $(COLL_TESTS) tests/coll/collcheck.c tests/coll/fortran_coll.f90 tests/coll/auto_select.c \
	tests/coll/nonblocking.c tests/coll/pace_hint.c
