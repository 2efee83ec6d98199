# SPDX-License-Identifier: BSD-3-Clause
# The collectives benchmark (bench/coll/README.md). Nothing is built here:
# bench/coll/run-coll compiles hashi-coll-bench with the installed mpicc.

COLL_BENCH_FILES = \
	bench/coll/README.md \
	bench/coll/run-coll \
	bench/coll/coll_report.py \
	bench/coll/hashi-coll-bench.c \
	bench/coll/barrier-skew.c \
	bench/coll/median.h \
	bench/coll/run-barrier-skew

# A quick run of the runner on a 2 x 2 testbed (under a minute; as root,
# skipped otherwise).
TESTS += bench/coll/smoke.sh
EXTRA_DIST += $(COLL_BENCH_FILES) bench/coll/smoke.sh
