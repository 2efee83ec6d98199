# SPDX-License-Identifier: BSD-3-Clause
# Smoke test of bench/p2p/run-p2p that CI can afford: one quick run on the
# sockets provider, a few seconds.  Checks that the runner builds the
# benchmark, runs it, and writes the table, the raw data and a plot whose
# numbers parse.  Never a timing: the machine is shared.
HASHI_TEST_WORK="${HASHI_TEST_WORK:-/tmp/hashi-test-work}/bench-p2p"
source "$HASHI_SRCDIR/tests/integration/lib.sh"

out="$work/out"
run quick -- "$HASHI_SRCDIR/bench/p2p/run-p2p" --prefix "$HASHI_PREFIX" --quick --peers sockets --out "$out"
expect_status quick 0
expect_in quick quick.out '^run-p2p: \[1/5\] sockets: latency'
for bench in latency bw bibw msgrate; do
    expect_in "table-$bench" "$out/tables.txt" "^== $bench: "
    # Every row of the table: a size, then a number (bandwidths with a share).
    expect_in "row-$bench" "$out/tables.txt" '^ *[0-9]+[KM]?  +[0-9]+(\.[0-9]+)?( \((<1|[0-9]+)%\))?$'
    expect_in "raw-$bench" "$out/raw/sockets.$bench.out" "^$bench [0-9]+ [0-9]+ [0-9.]+ "
done
expect_in peers "$out/tables.txt" '^  sockets: .*nodes: rank0=hostA rank1=hostB'

# results.json: every value a positive finite number, for every benchmark.
if python3 - "$out/results.json" >json.log 2>&1 <<'PY'
import json, math, sys
doc = json.load(open(sys.argv[1]))
res = doc["peers"]["sockets"]["results"]
assert sorted(res) == ["bibw", "bw", "latency", "msgrate"], sorted(res)
for bench, rows in res.items():
    assert rows, bench
    for size, iters, value in rows:
        assert size >= 0 and iters > 0 and math.isfinite(value) and value > 0, (bench, size, iters, value)
PY
then pass "results.json parses, all values positive"; else fail "results.json"; sed 's/^/    /' json.log; fi

for bench in latency bw; do
    if [[ -s $out/$bench.png ]] && file "$out/$bench.png" | grep -q 'PNG image'; then
        pass "plot $bench.png"
    else
        fail "plot $bench.png missing or not a PNG"; sed 's/^/    /' quick.out | tail -5
    fi
done

# A peer that cannot run is reported, and the others still run.
run missing -- "$HASHI_SRCDIR/bench/p2p/run-p2p" --prefix "$HASHI_PREFIX" --quick --peers no-such-provider,sockets \
    --benchmarks latency --out "$work/out-missing"
expect_status missing 0
expect_in missing missing.out "no-such-provider: unavailable: libfabric offers no provider 'no-such-provider'"
expect_in missing "$work/out-missing/tables.txt" '^size +sockets$'
# The raw TCP limit as a column of its own, beside one CPU-bound load
# process: its ratio column, the load line, and latency only (no failure
# for the benchmarks it does not have).
run limit -- "$HASHI_SRCDIR/bench/p2p/run-p2p" --prefix "$HASHI_PREFIX" --quick --peers sockets,tcp \
    --benchmarks latency,bw --subject sockets --oversubscribe 1 --out "$work/out-limit"
expect_status limit 0
expect_in limit limit.out '^run-p2p: oversubscribed: 1 CPU-bound processes'
expect_in limit "$work/out-limit/tables.txt" '^size +sockets +tcp +sockets/best +sockets/tcp$'
expect_in limit "$work/out-limit/tables.txt" '^ +4K +[0-9.]+ +[0-9.]+ +- +[0-9.]+$'
expect_in limit "$work/out-limit/tables.txt" '^load: 1 CPU-bound processes.*, autogroup scheduling (on|off|not in)'
expect_in limit "$work/out-limit/raw/tcp.latency.out" '^latency 4096 [0-9]+ [0-9.]+ us$'
expect_count limit-only "$work/out-limit/tables.txt" 'tcp.*FAILED|not measured: tcp' 0
# No peer measured anything: that is a failed run, with the reason.
run none -- "$HASHI_SRCDIR/bench/p2p/run-p2p" --prefix "$HASHI_PREFIX" --quick --peers no-such-provider \
    --out "$work/out-none"
expect_status none 1
expect_in none "$work/out-none/tables.txt" '^  no-such-provider: UNAVAILABLE: '
finish
