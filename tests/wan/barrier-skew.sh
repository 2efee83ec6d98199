#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# The hierarchical barrier releases both clusters together
# (src/coll/algorithms/barrier_hier.cpp, "Even release"): on a testbed of
# 2 clusters x 2 nodes at 10 ms one way, bench/coll/barrier-skew times
# 4 KiB MPICH bcasts from rank 0 with Hashi's barrier between them; the
# bcast makes cluster 1 arrive at each barrier a WAN latency after cluster
# 0. The check: each cluster's release, measured from the last arrival
# (median over the repetitions), is at least half the other's. Before the
# fix cluster 1 left 0.9 ms after the last arrival and cluster 0 14.7 ms
# (a ratio of 0.06); released together the ratio is about 1. The bound of
# 0.5 separates the two behaviours, not fast from slow: both figures are
# on the same clock in the same job, and load stretches both.
source "$HASHI_SRCDIR/tests/integration/lib.sh"

if [[ $(id -u) -ne 0 ]]; then
    say "SKIP: needs root to create network namespaces (run make check as root)"
    exit 77
fi
tb="$HASHI_PREFIX/bin/hashi-testbed"
export HASHI_TESTBED_INSTANCE=skewtest
trap '"$tb" down >/dev/null 2>&1' EXIT

run up -- "$tb" up --clusters 2 --nodes 2 --wan-delay 10 --mode routed --realtime
expect_status up 0
compile mpicc "$HASHI_SRCDIR/bench/coll/barrier-skew.c" barrier-skew

# One rank per node, launched as a grid user would (hashi-grid-run:
# impi-server and one mpiexec -client K per cluster).
run hier -- timeout 120 "$HASHI_PREFIX/bin/hashi-grid-run" --ppn 1 -n 4 \
    -genv HASHI_COLL_BARRIER hier -genv HASHI_COLL_BCAST mpich -genv HASHI_COLL_VERBOSE 1 \
    ./barrier-skew barrier --sizes 4K --warmup 5 --reps 40
expect_status hier 0
expect_in hier hier.out "^barrier 4096 5 40 [0-9.]+ [0-9.]+ ok$"
expect_in hier hier.err "barrier on comm of 4 ranks in 2 clusters, 0 bytes: hier \(forced"
line=$(grep -E "^# skew 4096 " hier.out)
if [[ $line =~ per-cluster-exit-ms=([0-9.]+),([0-9.]+)$ ]]; then
    c0=${BASH_REMATCH[1]} c1=${BASH_REMATCH[2]}
    if awk -v a="$c0" -v b="$c1" 'BEGIN { exit !(a >= 0.5 * b && b >= 0.5 * a) }'; then
        pass "clusters released together: $c0 ms and $c1 ms after the last arrival ($line)"
    else
        fail "clusters released apart: cluster 0 $c0 ms, cluster 1 $c1 ms after the last arrival ($line)"
    fi
else
    fail "no per-cluster release times in hier.out: ${line:-no '# skew' line}"
fi

finish
