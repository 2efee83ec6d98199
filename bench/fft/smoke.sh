# SPDX-License-Identifier: BSD-3-Clause
# Smoke test of bench/fft/run-fft: one quick round of Hashi alone (1 MiB
# blocks, 4 ranks on this host, shared memory), which is also a check of
# the on-node alltoall's data: every block carries its step, source and
# destination, and a wrong one fails the run.  Never a timing.
HASHI_TEST_WORK="${HASHI_TEST_WORK:-/tmp/hashi-test-work}/bench-fft"
source "$HASHI_SRCDIR/tests/integration/lib.sh"

out="$work/out"
run quick -- env HASHI_COLL_VERBOSE=1 "$HASHI_SRCDIR/bench/fft/run-fft" --prefix "$HASHI_PREFIX" --quick \
    --peers hashi,hashi:coll-off --out "$out"
expect_status quick 0
for peer in hashi hashi:coll-off; do
    expect_in "row-$peer" "$out/tables.txt" "^ *$peer +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+ +1$"
done
expect_in raw "$out/hashi.out" '^alltoall 1048576 3 [0-9.]+ [0-9.]+$'
# Hashi's own run took the single copy; HASHI_COLL=off left it to MPICH.
expect_in cma "$out/hashi.err" '^hashi-coll: alltoall on comm of 4 ranks in 1 clusters, .*: cma '
expect_count no-cma "$out/hashi_coll_off.err" 'hashi-coll: alltoall' 0
# Bad arguments are usage errors, with the reason.
run bad -- "$HASHI_SRCDIR/bench/fft/run-fft" --prefix "$HASHI_PREFIX" --peers hashi,nope --out "$work/bad"
expect_status bad 2
expect_in bad bad.err "unknown peer 'nope'"
finish
