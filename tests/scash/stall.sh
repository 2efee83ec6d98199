#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The stall of issue 19: LU and Jacobi runs that took 20-300x their median
# when CPU-bound jobs shared the cores. Its cause was waiting by
# sched_yield: the service thread and the waiting application thread both
# polled MPI, the provider yielded inside MPICH's global lock, and every
# yield handed a busy neighbour a whole time slice (src/scash/wait.hpp).
#
# The condition is made here on purpose: the job and two busy loops share
# one CPU (taskset), so there is always a CPU-bound neighbour. Each program
# runs 3 times without and 3 times with the neighbours, interleaved, and
# the check is on the programs' own timed part (time=, from after the
# first barrier: not the start-up).
#
# The bound: with two busy loops beside the job's 4 processes on one CPU,
# a fair scheduler leaves the job 4/6 of the CPU while it computes, and a
# waiting process sleeps (wait.hpp) and wakes when its reply comes, so the
# median may slow by that share plus wake-up latencies of a time slice at
# worst per reply: measured 6-8x at LU n=256 (0.25 s -> 1.5-2.0 s). The
# yielding waits made it 80x and more (0.3 s -> 24 s, or past 60 s). 25x
# lies between, with room for a loaded machine on either side. The
# slowest of the runs without neighbours against their median (10x: the
# spread of such short runs measured on a shared machine with load 12-15
# was at most 5x) catches a stall that happens without help.
. "$HASHI_SRCDIR/tests/scash/lib-scash.sh"

scash_compile "$scash_examples/lu.c" lu || { finish; exit; }
scash_compile "$scash_examples/jacobi.c" jacobi || { finish; exit; }

cpu=$(taskset -cp $$ | sed 's/.*: *//; s/[-,].*//')
busy_pids=()
start_busy() {
    for _ in 1 2; do
        taskset -c "$cpu" bash -c 'while :; do :; done' &
        busy_pids+=($!)
    done
}
stop_busy() {
    for p in "${busy_pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    busy_pids=()
}
trap stop_busy EXIT

timed_part() { sed -n 's/.* time=\([0-9.]*\) s .*/\1/p' "$1"; }
median3() { printf '%s\n' "$@" | sort -g | sed -n 2p; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "inf" }'; }
within() { awk -v r="$1" -v bound="$2" 'BEGIN { exit !(r != "inf" && r <= bound) }'; }

check_app() { # name program args...
    local app=$1 quiet=() busy=()
    shift
    for i in 1 2 3; do
        scash_run "$app-quiet-$i" -- taskset -c "$cpu" "$@"
        expect_in "$app-quiet-$i" "$app-quiet-$i.out" 'check: bitwise equal to the sequential run'
        quiet+=("$(timed_part "$app-quiet-$i.out")")
        start_busy
        scash_run "$app-busy-$i" -- taskset -c "$cpu" "$@"
        stop_busy
        expect_in "$app-busy-$i" "$app-busy-$i.out" 'check: bitwise equal to the sequential run'
        busy+=("$(timed_part "$app-busy-$i.out")")
    done
    # A run that did not finish (killed by the timeout) has no time: that
    # is the stall itself, not a ratio to compute.
    local n_times
    n_times=$(printf '%s\n' "${quiet[@]}" "${busy[@]}" | grep -c '^[0-9]')
    if [[ $n_times -lt 6 ]]; then
        fail "$app: only $n_times of 6 runs finished within ${SCASH_TIMEOUT} s (alone: ${quiet[*]}; beside busy loops: ${busy[*]}): a stall"
        return
    fi
    local qm bm slowest
    qm=$(median3 "${quiet[@]}") bm=$(median3 "${busy[@]}")
    slowest=$(printf '%s\n' "${quiet[@]}" | sort -g | tail -1)
    local r s
    r=$(ratio "$bm" "$qm") s=$(ratio "$slowest" "$qm")
    if within "$r" 25; then
        pass "$app: beside two busy loops ${busy[*]} s against ${quiet[*]} s alone: median ${r}x (bound 25x)"
    else
        fail "$app: beside two busy loops ${busy[*]} s against ${quiet[*]} s alone: median ${r}x, over 25x: waiting processes hand their CPU away (a stall)"
    fi
    if within "$s" 10; then
        pass "$app: slowest run alone ${s}x the median (bound 10x)"
    else
        fail "$app: slowest run alone ${s}x the median ${quiet[*]}, over 10x (a stall)"
    fi
}

check_app lu ./lu -n 256 -b 16 -c -d cyclic -S
check_app jacobi ./jacobi -n 256 -i 20 -c -d cyclic -S

finish
