# SPDX-License-Identifier: BSD-3-Clause
# Smoke test of bench/coll/run-coll that CI can afford (well under two
# minutes): a 2 x 2 testbed of its own, bcast and allreduce at two tiny
# sizes, MPICH's default, Hashi's automatic choice and one forced algorithm
# each. Checks that the runner brings the testbed up and down, builds the
# benchmark, runs the federated jobs and writes its tables, summary,
# results.json and plots, and that a wrong variant is refused. Never a
# timing: the machine is shared. Needs root (network namespaces).
HASHI_TEST_WORK="${HASHI_TEST_WORK:-/tmp/hashi-test-work}/bench-coll"
source "$HASHI_SRCDIR/tests/integration/lib.sh"

if [[ $(id -u) -ne 0 ]]; then
    say "SKIP: needs root to create network namespaces (run make check as root)"
    exit 77
fi
runner="$HASHI_SRCDIR/bench/coll/run-coll"
instance=collsmoke
out="$work/out"

run quick -- timeout 170 "$runner" --prefix "$HASHI_PREFIX" --instance "$instance" --clusters 2 --nodes 2 \
    --collectives bcast,allreduce --variants mpich,auto,bcast:matsuda,allreduce:lr_lr --sizes 1K,16K \
    --reps 2 --warmup 1 --timeout 60 --out "$out"
expect_status quick 0
# A progress line per measurement, with the load at the start of each job.
expect_in progress quick.out '^run-coll: \[1/[0-9]+\] bcast mpich 1K: [0-9.]+ ms \(median of 2\)$'
expect_in load quick.out '^run-coll: \[1/[0-9]+\] bcast mpich: HASHI_COLL=off; load [0-9.]+ '
for coll in bcast allreduce; do
    expect_in "table-$coll" "$out/tables.txt" "^== $coll: size = "
    expect_in "raw-$coll" "$out/raw/$coll.mpich.c0.out" "^$coll 16384 1 2 [0-9.]+ [0-9.]+ ok$"
done
# Every row: size, repetitions, MPICH's time, then the others or why not.
expect_count rows "$out/tables.txt" '^ *(1|16)K +2 +[0-9.]+( |$)' 4
expect_in summary "$out/tables.txt" '^== at 32M against the targets of issue 5'
expect_in testbed "$out/tables.txt" "^testbed: testbed '$instance': 2 cluster\(s\) x 2 node\(s\)"
expect_in sysctl "$out/tables.txt" '^  net\.ipv4\.tcp_slow_start_after_idle = [01] on every node$'
expect_in machine "$out/tables.txt" '^machine: [0-9]+ cores; load average at start '
expect_in ranks "$out/raw/bcast.mpich.c0.out" '^# nodes \(rank=host@cluster\): 0=c0n0@0 1=c0n1@0 2=c1n0@1 3=c1n1@1$'

if [[ -e $HASHI_PREFIX/lib/libhashi-coll.so ]]; then
    # Hashi's variants ran: ratios against MPICH in the table, the forced
    # algorithm named in the job's environment.
    expect_in ratio "$out/tables.txt" '^ *16K +2 +[0-9.]+ +[0-9.]+ \([0-9.]+x\)'
    expect_in forced "$out/raw/bcast.matsuda.c0.out" '^# environment: .*HASHI_COLL_BCAST=matsuda'
else
    expect_in no-coll "$out/tables.txt" '^   not measured: auto, matsuda: libhashi-coll is not installed'
fi

# results.json: the collectives run, every time positive and finite.
if python3 - "$out/results.json" >json.log 2>&1 <<'PY'
import json, math, sys
doc = json.load(open(sys.argv[1]))
runs = doc["runs"]
assert sorted(runs) == ["allreduce", "bcast"], sorted(runs)
assert runs["bcast"]["mpich"]["rows"], "no rows for bcast mpich"
for coll, variants in runs.items():
    for name, v in variants.items():
        for row in v["rows"]:
            assert math.isfinite(row["time"]) and row["time"] > 0, (coll, name, row)
assert doc["context"]["sysctls"], "no sysctls recorded"
PY
then pass "results.json parses, all times positive"; else fail "results.json"; sed 's/^/    /' json.log; fi

if command -v gnuplot >/dev/null; then
    for png in bcast allreduce; do
        if file "$out/$png.png" 2>/dev/null | grep -q 'PNG image'; then pass "plot $png.png"; else
            fail "plot $png.png missing or not a PNG"; tail -5 quick.out | sed 's/^/    /'; fi
    done
fi
if ip netns list | grep -q "^htb-$instance-"; then fail "testbed left up"; else pass "testbed removed"; fi

# A variant no collective has is refused before anything starts.
run badvariant -- "$runner" --prefix "$HASHI_PREFIX" --instance "$instance" --collectives bcast --variants lr_lr \
    --out "$work/out-bad"
expect_status badvariant 2
expect_in badvariant badvariant.err "'lr_lr' is no variant of any of bcast"
finish
