#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A descriptor flood against a rank: with the ranks limited to 1024
# descriptors, a stranger opens 1,100 connections to one rank's port and
# holds them while the job makes its remaining connections (an all-to-all).
# The job must finish correctly in about its normal time (measured in the
# same run without the flood), the rank must hold only a bounded number of
# the stranger's connections, and its log must stay short.
source "$HASHI_SRCDIR/tests/integration/lib.sh"
source "$HASHI_SRCDIR/tests/security/lib-security.sh"

compile mpicc "$secprograms/flood_target.c" flood_target || { finish; exit 1; }
export MPIR_CVAR_NOLOCAL=1

# run_job NAME FLOOD(0|1): one job of 4 ranks, with or without the flood.
run_job() {
    local name=$1 flood=$2 flag="$work/$1.go" job
    (ulimit -n 1024 && exec mpiexec -n 4 ./flood_target "$flag") >"$name.out" 2>"$name.err" </dev/null &
    job=$!
    wait_for "$name.out" '^ready' 60 || fail "$name: the job did not start"
    if [[ $flood == 1 ]]; then
        local sock pid held
        sock=$(listening flood_target | head -1)
        pid=$(ss -ltnpH | grep -F " $sock " | sed -n 's/.*pid=\([0-9]*\),.*/\1/p' | head -1)
        (ulimit -n 4096 && exec "$intruder" --hold 1100 8 "${sock%:*}" "${sock##*:}") >"$name.flood" 2>&1 &
        flooder=$!
        wait_for "$name.flood" '^holding' 60
        sed 's/^/    flooder: /' "$name.flood"
        sleep 1
        held=$(ss -tnpH state established | grep -c "pid=$pid,")
        # Its 3 peers (and itself) plus at most 64 connections in their
        # handshake.
        if [[ $held -le 72 ]]; then pass "the flooded rank holds $held connections, not the stranger's 1100"; else
            fail "the flooded rank holds $held connections"; fi
    fi
    touch "$flag"
    wait $job
    status=$?
    expect_status "$name" 0
    expect_in "$name" "$name.out" "^exchanges correct in"
}
run_job normal 0
run_job flooded 1
wait "$flooder"
t0=$(sed -n 's/^exchanges correct in \([0-9.]*\) s$/\1/p' normal.out)
t1=$(sed -n 's/^exchanges correct in \([0-9.]*\) s$/\1/p' flooded.out)
say "all-to-all part: $t0 s without the flood, $t1 s with it"
# "About its normal time": a correctness bound, generous for a loaded
# 2-core CI machine (a rank that spins or stalls on accept takes far more).
if awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b <= 3 * a + 5) }'; then pass "the flooded job finished in about its normal time"; else
    fail "the flooded job took $t1 s against $t0 s"; fi
lines=$(wc -l <flooded.err)
if [[ $lines -le 60 ]]; then pass "the ranks wrote $lines lines of log under the flood"; else
    fail "the ranks wrote $lines lines of log under the flood"; sed 's/^/    /' flooded.err | head -20; fi
if leftovers "flood_target $work"; then fail "processes left behind"; else pass "no processes left behind"; fi
finish
