#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# SCASH across two emulated clusters: LU and Jacobi on 4 processes, one per
# node of a 2 x 2 testbed (hashi-testbed instance "scash", 10 ms one-way
# WAN delay), federated by impi-server with one `mpiexec -client K` per
# cluster, so page fetches, diffs, write notices and the barrier cross the
# WAN on the hashi provider. Each result must equal a 1-process run of the
# same program bit for bit (both write their result with -o; the programs'
# own -c check against a sequential computation runs too). Static and
# dynamic homes; a process that exits early still ends the job with a
# message. Then the same testbed comes up again as two strict private
# clusters (no route between them, one gateway each: lean, and no relay of
# this test is "relay 1", which tests/wan/relay.sh's fault kills by name)
# and hashi-grid-run runs LU and Jacobi with dynamic homes through
# impi-relay on the gateways, as a grid user would: bit for bit again.
# Needs root (network namespaces).
source "$HASHI_SRCDIR/tests/integration/lib.sh"
tb="$HASHI_PREFIX/bin/hashi-testbed"
export HASHI_TESTBED_INSTANCE=scash
server=""
[[ $(id -u) -eq 0 ]] || { say "SKIP: network namespaces need root (run make check as root)"; exit 77; }
cleanup() {
    if [[ -n $server ]]; then kill "$server" 2>/dev/null; fi
    "$tb" down >/dev/null 2>&1
}
trap cleanup EXIT
# Generous limits: each only turns a hang into a failure.
limit=${SCASH_CLUSTER_TIMEOUT:-240}

# Real-time delay lines: on a loaded machine a starved delay line stalls the
# WAN long enough for the startup connections' keepalive to give up.
run up -- "$tb" up --clusters 2 --nodes 2 --wan-delay 10 --mode routed --realtime
expect_status up 0

ex="$HASHI_SRCDIR/examples/scash"
compile mpicc "$ex/lu.c" lu -lhashi-scash || { finish; exit; }
compile mpicc "$ex/jacobi.c" jacobi -lhashi-scash || { finish; exit; }
compile mpicc "$HASHI_SRCDIR/tests/scash/programs/early_exit.c" early_exit -lhashi-scash || { finish; exit; }

secret="$work/job.secret"
(umask 077 && head -c 32 /dev/urandom | base64 >"$secret")

# across NAME program args...: the job on c0n0, c0n1 (cluster 0) and c1n0,
# c1n1 (cluster 1), one process each. NAME.out/err gather the clients' and
# the server's output; $status is 0 when all three succeeded.
across() {
    local name=$1 port
    shift
    port=7600 # the namespace c0n0 is fresh: any port is free
    "$tb" exec c0n0 impi-server -server 2 -port "$port" -timeout "$limit" -impi-secret-file "$secret" \
        >"$name.server" 2>&1 &
    server=$!
    local -a opts=(-impi-secret-file "$secret" -impi-timeout "$limit" -launcher exec -launcher-exec "$tb exec {host}")
    local codes=()
    for k in 1 0; do
        timeout -k 5 "$limit" "$tb" exec "c${k}n0" mpiexec -client "$k" "198.19.0.10:$port" \
            -hosts "c${k}n0:1,c${k}n1:1" "${opts[@]}" "$@" >"$name.c$k.out" 2>"$name.c$k.err" &
        codes+=($!)
    done
    status=0
    for pid in "${codes[@]}" "$server"; do
        wait "$pid" || status=$?
    done
    server=""
    cat "$name.c0.out" "$name.c1.out" >"$name.out"
    cat "$name.c0.err" "$name.c1.err" "$name.server" >"$name.err"
    say "ran across 2 clusters: $* (exit $status)"
}

# same NAME REF OUT: the result of the 4-process run equals the 1-process one.
same() {
    if [[ -s $2 ]] && cmp -s "$2" "$3"; then pass "$1: bit for bit equal to the 1-process run"; else
        fail "$1: $3 differs from the 1-process run's $2"; fi
}

run lu-1 -- timeout "$limit" mpiexec -n 1 ./lu -n 128 -b 16 -o lu-1.bin
expect_status lu-1 0
run jacobi-1 -- timeout "$limit" mpiexec -n 1 ./jacobi -n 96 -i 12 -o jacobi-1.bin
expect_status jacobi-1 0

for homes in "cyclic" "block -S" "hand -S"; do
    name="lu-${homes// /}"
    across "$name" ./lu -n 128 -b 16 -c -d $homes -o "$name.bin"
    expect_status "$name" 0
    expect_in "$name" "$name.out" '^lu: n=128 B=16 P=4 '
    expect_in "$name" "$name.out" '^lu: check: bitwise equal to the sequential run'
    same "$name" lu-1.bin "$name.bin"
done
expect_in lu-cyclic lu-cyclic.out 'diffs=0 diff_bytes=0 '

for homes in "block" "cyclic -S"; do
    name="jacobi-${homes// /}"
    across "$name" ./jacobi -n 96 -i 12 -c -d $homes -o "$name.bin"
    expect_status "$name" 0
    expect_in "$name" "$name.out" '^jacobi: check: bitwise equal to the sequential run'
    same "$name" jacobi-1.bin "$name.bin"
done

# Process 3 (cluster 1) leaves without scash_finalize: a message, no hang.
across early-exit ./early_exit
if [[ $status -ne 0 && $status -ne 124 ]]; then pass "early-exit: failed (exit $status) without hanging"; else
    fail "early-exit: exit status $status (0: not detected, 124: hung)"; fi
expect_in early-exit early-exit.err 'scash: process 3 is exiting without scash_finalize; aborting the job'

# Through relays: strict clusters reach each other only through the
# impi-relays hashi-grid-run starts on the gateways; one process per node.
run up-strict -- "$tb" up --clusters 2 --nodes 2 --wan-delay 10 --mode strict --realtime
expect_status up-strict 0
for job in "lu -n 128 -b 16 -d block" "jacobi -n 96 -i 12 -d cyclic"; do
    read -r prog args <<<"$job"
    name="$prog-relayed"
    run "$name" -- timeout -k 10 "$limit" hashi-grid-run --ppn 1 --secret-file "$secret" --logs "$name.logs" -n 4 \
        "./$prog" -c $args -o "$name.bin"
    expect_status "$name" 0
    expect_in "$name" "$name.out" "^$prog: .*P=4 .*homes=[a-z]+\+dynamic "
    expect_in "$name" "$name.out" "^$prog: check: bitwise equal to the sequential run"
    expect_in "$name" "$name.out" "^$prog: stats: .* home_moves=[1-9]"
    same "$name" "$prog-1.bin" "$name.bin"
done

run down -- "$tb" down
expect_status down 0
if ip netns list | grep -q "htb-scash-"; then fail "namespaces left after down"; else pass "no namespaces left"; fi
if leftovers "$work/(lu|jacobi|early_exit)" || pgrep -f "impi-(server|relay) .*-impi-secret-file $secret" >/dev/null; then
    fail "processes left behind"
else
    pass "no processes left behind"
fi
finish
