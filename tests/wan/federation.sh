#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# One MPI job across two emulated clusters (hashi-testbed: 2 clusters x 2
# nodes, 10 ms one-way WAN delay), federated by impi-server, one
# `mpiexec -client K` per cluster, 2 processes per node, on the hashi
# provider: the examples and the IS-like kernel verify; MPI_COMM_WORLD ranks
# are contiguous per cluster; MPICH's shared-memory communicator is exactly
# the ranks of one node. Prints the startup time of the federated job next
# to the same job within one cluster.
source "$HASHI_SRCDIR/tests/integration/lib.sh"

if [[ $(id -u) -ne 0 ]]; then
    say "SKIP: needs root to create network namespaces (run make check as root)"
    exit 77
fi
tb="$HASHI_PREFIX/bin/hashi-testbed"
export HASHI_TESTBED_INSTANCE=fedtest
trap '[[ -n ${server_pid:-} ]] && kill "$server_pid" 2>/dev/null; "$tb" down >/dev/null 2>&1' EXIT

# Real-time delay lines: the control connections cross this WAN and are
# declared dead after 20 s of silence; a delay line starved on a busy
# machine would be such a silence (relay/README.md, Failures).
run up -- "$tb" up --clusters 2 --nodes 2 --wan-delay 10 --mode routed --realtime
expect_status up 0

ex="$HASHI_SRCDIR/examples"
compile mpicc "$ex/hello.c" hello
compile mpicc "$ex/ring.c" ring
compile mpicc "$ex/pi.c" pi -lm
compile mpicc "$ex/isort.c" isort -lm
compile mpifort "$ex/hello_f90.f90" hello_f90
compile mpicc "$programs/nodeinfo.c" nodeinfo

secret="$work/job.secret"
(umask 077 && head -c 32 /dev/urandom | base64 >"$secret")
launch=(-impi-secret-file "$secret" -launcher exec -launcher-exec "$tb exec {host}")

# federated NAME program args...: impi-server on c0n0, a client per cluster.
# NAME.out has cluster 0's output then cluster 1's; $status is 0 only when
# both clients and the server succeeded; $elapsed_ms is the wall time.
federated() {
    local name=$1
    shift
    "$tb" exec c0n0 impi-server -server 2 -impi-secret-file "$secret" >"$name.server" 2>&1 &
    server_pid=$!
    local addr=""
    for _ in $(seq 100); do
        addr=$(head -n 1 "$name.server" 2>/dev/null)
        [[ $addr == *:* ]] && break
        sleep 0.1
    done
    local start rc0=0 rc1=0 rcs=0
    start=$(date +%s%N)
    timeout 120 "$tb" exec c1n0 mpiexec -client 1 "$addr" -hosts c1n0:2,c1n1:2 "${launch[@]}" "$@" \
        >"$name.c1.out" 2>"$name.c1.err" &
    local c1=$!
    timeout 120 "$tb" exec c0n0 mpiexec -client 0 "$addr" -hosts c0n0:2,c0n1:2 "${launch[@]}" "$@" \
        >"$name.c0.out" 2>"$name.c0.err" || rc0=$?
    wait "$c1" || rc1=$?
    wait "$server_pid" || rcs=$?
    server_pid=""
    elapsed_ms=$((($(date +%s%N) - start) / 1000000))
    cat "$name.c0.out" "$name.c1.out" >"$name.out"
    cat "$name.c0.err" "$name.c1.err" "$name.server" >"$name.err"
    status=$((rc0 != 0 || rc1 != 0 || rcs != 0))
    say "ran federated: $* (clients $rc0/$rc1, server $rcs, $elapsed_ms ms)"
}

federated hello ./hello
expect_status hello 0
expect_count hello hello.out "^Hello from rank [0-9] of 8 on c[01]n[01] \(C\)$" 8
expect_in hello hello.out "^hello: 8 ranks answered"
federated_ms=$elapsed_ms

# Contiguous per cluster, two per node, shared memory only within a node.
federated nodeinfo ./nodeinfo
expect_status nodeinfo 0
for r in 0 1 2 3 4 5 6 7; do
    c=$((r / 4))
    n=$(((r % 4) / 2))
    expect_in "nodeinfo-rank$r" nodeinfo.out "^rank=$r node=c${c}n${n} .* node_size=2 node_rank=$((r % 2)) sum=36$"
done

federated ring ./ring 5
expect_status ring 0
expect_in ring ring.out "over 8 ranks: OK"
federated pi ./pi 2000000
expect_status pi 0
expect_in pi pi.out "on 8 ranks .*: OK"
federated hello_f90 ./hello_f90
expect_status hello_f90 0
expect_count hello_f90 hello_f90.out "Hello from rank" 8
federated isort ./isort 262144
expect_status isort 0
expect_in isort isort.out "on 8 ranks"
expect_in isort isort.out "VERIFICATION SUCCESSFUL"
# The same sort with MPICH's own collectives: many large messages at once
# on the integrity-protected streams between the clusters, so a stream
# often seals bytes the socket cannot take yet. The provider once dropped
# EPOLLOUT while such bytes were still sealed inside the stream, and this
# job hung every time (3 runs of 3). MPIEXEC_TIMEOUT turns a hang into a
# failure within a minute.
MPIEXEC_TIMEOUT=60 federated isort_mpich -genv HASHI_COLL off ./isort 262144
expect_status isort_mpich 0
expect_in isort_mpich isort_mpich.out "VERIFICATION SUCCESSFUL"

# Every cluster derives the same job key from the job's secret and id,
# HMAC-SHA256(secret, "hashi rank key v1" || id as 8 bytes big-endian),
# without sending it anywhere.
compile mpicc "$HASHI_SRCDIR/tests/security/programs/key_wait.c" key_wait
federated key ./key_wait
expect_status key 0
expect_in key key.out "^keys agree$"
job=$(grep -Eo 'job=[0-9a-f]{16}' key.out | sort -u)
expected=$(python3 -c '
import hmac, hashlib, sys
secret = open(sys.argv[1], "rb").read().rstrip(b"\n")
job = int(sys.argv[2], 16).to_bytes(8, "big")
print(hmac.new(secret, b"hashi rank key v1" + job, hashlib.sha256).hexdigest())' "$secret" "${job#job=}" 2>/dev/null)
expect_count key key.out "^rank=[0-7] size=8 key=$expected impi_secret=<unset> pmi_port=<unset> $job$" 8

# The same hello within cluster 0 alone, for the startup comparison.
start=$(date +%s%N)
run single -- timeout 120 "$tb" exec c0n0 mpiexec -n 4 -hosts c0n0:2,c0n1:2 -launcher exec \
    -launcher-exec "$tb exec {host}" ./hello
single_ms=$((($(date +%s%N) - start) / 1000000))
expect_status single 0
say "measured: hello on 8 ranks over 2 clusters (federated) took $federated_ms ms; on 4 ranks in one cluster $single_ms ms"

run down -- "$tb" down
expect_status down 0
if ip netns list | grep -q "htb-fedtest-"; then fail "namespaces left after down"; else pass "no namespaces left"; fi
# Only this test's processes: other tests may run their own impi-server
# at the same time (make -j check), so match this test's secret file.
if leftovers "$work/(hello|ring|pi|isort|nodeinfo)" || leftovers "impi-server .*-impi-secret-file $secret"; then
    fail "processes left behind"
else
    pass "no processes left behind"
fi
finish
