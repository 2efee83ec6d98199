# SPDX-License-Identifier: BSD-3-Clause
# mpiexec's error cases: each gives a clear message and a non-zero exit,
# and a failed job leaves no process behind.
source "$HASHI_SRCDIR/tests/integration/lib.sh"

for p in segv abort exit_code wait_forever; do
    compile mpicc "$programs/$p.c" "$p"
done

run unknown-flag -- mpiexec -frobnicate -n 2 ./segv
expect_status unknown-flag 2
expect_in unknown-flag unknown-flag.err "^mpiexec: error: unknown option '-frobnicate'"

run no-program -- mpiexec -n 2
expect_status no-program 2
expect_in no-program no-program.err "no program given"

run missing-program -- mpiexec -n 2 ./does-not-exist
expect_status missing-program 127
expect_in missing-program missing-program.err "program './does-not-exist' not found or not executable"

run missing-in-path -- mpiexec -n 2 no-such-program-anywhere
expect_status missing-in-path 127
expect_in missing-in-path missing-in-path.err "searched PATH"

printf 'node0:2\nnode1 slots=two\n' > bad-hosts
run bad-hostfile -- mpiexec -f bad-hosts -n 2 ./segv
expect_status bad-hostfile 2
expect_in bad-hostfile bad-hostfile.err "bad hostfile: bad-hosts:2: slot count 'two' is not a whole number from 1 to 1048576"

run bad-count -- mpiexec -n many ./segv
expect_status bad-count 2
expect_in bad-count bad-count.err "option -n 'many' is not a whole number from 1 to 1048576"

run bad-launcher -- mpiexec -launcher exec -launcher-exec "/nonexistent/launcher {host}" -hosts a ./segv
expect_status bad-launcher 127
expect_in bad-launcher bad-launcher.err "cannot start rank 0: '/nonexistent/launcher': No such file or directory"

start=$(date +%s)
run segfault -- mpiexec -n 4 ./segv 2
expect_status segfault 139
expect_in segfault segfault.err "^mpiexec: rank 2 \(pid [0-9]+ on [^)]+\) was killed by signal 11 \(SIGSEGV, Segmentation fault\); killing the other 3 ranks"
say "segfault job ended after $(( $(date +%s) - start )) s"

run abort -- mpiexec -n 4 ./abort 3
expect_status abort 3
expect_in abort abort.err "rank 0 \(pid [0-9]+ on [^)]+\) called MPI_Abort with exit code 3"

run abort-netmod -- mpiexec -n 4 -launcher-exec "env X={host}" -hosts a,b,c,d ./abort 7
expect_status abort-netmod 7

run exit-code -- mpiexec -n 3 ./exit_code 1 5
expect_status exit-code 5
expect_in exit-code exit-code.err "rank 1 \(pid [0-9]+ on [^)]+\) exited with status 5"

run no-finalize -- mpiexec -n 3 ./exit_code 2 0 nofinalize
expect_status no-finalize 1
expect_in no-finalize no-finalize.err "rank 2 \(pid [0-9]+ on [^)]+\) exited without calling MPI_Finalize"

run timeout -- mpiexec -n 2 -timeout 3 ./wait_forever
expect_status timeout 124
expect_in timeout timeout.err "ran longer than the timeout of 3 s; killing the 2 ranks$"

run env-timeout -- env MPIEXEC_TIMEOUT=2 mpiexec -n 2 ./wait_forever
expect_status env-timeout 124

# One rank fails a setting at MPI_Init: the report is that rank's own
# status (MPICH exits with 128 + the error class, 143 for MPI_ERR_OTHER)
# and message, not the SIGTERM mpiexec then sends the others.
run init-fails -- mpiexec -n 3 ./exit_code 0 0 : -n 1 -env FI_HASHI_EAGER_SIZE bogus ./exit_code 0 0
expect_status init-fails 143
expect_in init-fails init-fails.err "FI_HASHI_EAGER_SIZE='bogus'"
expect_in init-fails init-fails.err "^mpiexec: rank 3 \(pid [0-9]+ on [^)]+\) exited with status 143 \(its own exit status, not a signal: .*error class, here 15,"
expect_count init-fails init-fails.err "^mpiexec: " 1

# A job that cannot fit is refused before anything starts, at once.
cat >mark <<'SH'
#!/bin/sh
touch "started.$PMI_RANK"
SH
chmod +x mark
cpus=$(nproc)
too_many=$((cpus * 64 + 1))
start_ns=$(date +%s%N)
run too-many -- mpiexec -n "$too_many" ./mark
took_ms=$((($(date +%s%N) - start_ns) / 1000000))
expect_status too-many 2
expect_in too-many too-many.err "^mpiexec: error: $too_many processes on this machine are far more than its $cpus CPUs? can run .*nothing was started\. To start them anyway add -oversubscribe"
if [[ $took_ms -lt 2000 ]]; then pass "too-many: refused in $took_ms ms"; else fail "too-many: took $took_ms ms to refuse"; fi
# Past the descriptor limit even with -oversubscribe (100000 processes
# once started 6,662 of them before the descriptors ran out).
run too-many-fds -- bash -c 'ulimit -n 1024 && exec mpiexec -oversubscribe -n 100000 ./mark'
expect_status too-many-fds 2
expect_in too-many-fds too-many-fds.err "^mpiexec: error: 100000 processes need about [0-9]+ open files in mpiexec .*limit of 1024 .*nothing was started.*ulimit -n"
if compgen -G 'started.*' >/dev/null; then fail "a refused job started processes: $(ls started.* | head -3)"; else
    pass "refused jobs started nothing"; fi
# Within the limits -oversubscribe runs them (cheaply: not MPI programs;
# only where that is a few hundred processes, for the CI budget).
if [[ $too_many -le 300 ]]; then
    run oversubscribed -- mpiexec -oversubscribe -n "$too_many" ./mark
    expect_status oversubscribed 0
    n=$(compgen -G 'started.*' | wc -l)
    if [[ $n -eq $too_many ]]; then pass "oversubscribed: $n processes ran"; else
        fail "oversubscribed: $n of $too_many processes ran"; fi
fi

sleep 0.5
if leftovers "$work/(segv|abort|exit_code|wait_forever)"; then
    fail "processes left behind: $(pgrep -af "$work/")"
else
    pass "no process left behind"
fi
finish
