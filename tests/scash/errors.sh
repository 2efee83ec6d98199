#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Error cases give a clear error, never a hang: use before initialization
# and without MPI_THREAD_MULTIPLE, an allocation larger than the job can
# back (and mismatched or bad arguments), MPI_Finalize before
# scash_finalize, a process that
# exits early or dies while the others wait in a barrier.
. "$HASHI_SRCDIR/tests/scash/lib-scash.sh"

for p in usage_errors too_big early_exit no_scash_finalize; do
    scash_compile "$scash_programs/$p.c" $p || { finish; exit; }
done

scash_run usage -- ./usage_errors
expect_status usage 0
expect_in usage usage.out '^usage_errors: ok'
expect_in usage usage.err 'scash_alloc: called before scash_init; call MPI_Init_thread with MPI_THREAD_MULTIPLE'
expect_in usage usage.err 'scash_init: MPI is not initialized'
expect_in usage usage.err 'scash_init: MPI provides thread level 0, SCASH needs MPI_THREAD_MULTIPLE'

scash_run too-big -- ./too_big
expect_status too-big 0
expect_in too-big too-big.out '^too_big: ok'
expect_in too-big too-big.err 'scash_alloc: .* requested .* but a process can back at most'
expect_in too-big too-big.err 'scash_alloc: the processes passed different sizes'

scash_run max-bytes SCASH_MAX_BYTES=8192 -- ./too_big
expect_in max-bytes max-bytes.err 'can back at most 8.0 KiB .*SCASH_MAX_BYTES'

# A malformed setting stops scash_init in every process, with its name,
# value and range, instead of being read as 0.
scash_run bad-setting SCASH_FETCH_PAGES=lots -- ./too_big
expect_no_hang bad-setting
expect_in bad-setting bad-setting.err "scash_init: SCASH_FETCH_PAGES='lots' is not a whole number from 1 to 256"

scash_run no-finalize -- ./no_scash_finalize
expect_no_hang no-finalize
if [[ $status -ne 0 ]]; then pass "no-finalize: exit status $status (not 0)"; else fail "no-finalize: exit status 0"; fi
expect_in no-finalize no-finalize.err 'scash: process [0-3] called MPI_Finalize before scash_finalize; call scash_finalize first'

scash_run early-exit -- ./early_exit
expect_no_hang early-exit
if [[ $status -ne 0 ]]; then pass "early-exit: exit status $status (not 0)"; else fail "early-exit: exit status 0"; fi
expect_in early-exit early-exit.err 'scash: process 3 is exiting without scash_finalize; aborting the job'
# mpiexec normally hears of the abort first; a peer may see the lost connection first.
expect_in early-exit early-exit.err 'rank 3 .* called MPI_Abort|lost peer 3 '
if grep -q 'passed the barrier' early-exit.out; then fail "early-exit: a process passed the barrier"; else
    pass "early-exit: no process passed the barrier"; fi

scash_run crash -- ./early_exit crash
expect_no_hang crash
# Either mpiexec sees the SIGKILL first (exit 137), or a peer's provider
# sees the lost connection first and that rank aborts: both name process 3.
if [[ $status -ne 0 ]]; then pass "crash: exit status $status (not 0)"; else fail "crash: exit status 0"; fi
expect_in crash crash.err 'rank 3 .* killed by signal 9|lost peer 3 '

finish
