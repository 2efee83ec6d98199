# SPDX-License-Identifier: BSD-3-Clause
# mpiexec features: hosts and slots with PMI_process_mapping, the exec
# launcher template, environment and working directory options, stdin
# forwarding, rank-prefixed output, MPMD, and signal propagation.
source "$HASHI_SRCDIR/tests/integration/lib.sh"

for p in nodeinfo show_env stdin_sum wait_forever; do
    compile mpicc "$programs/$p.c" "$p"
done

# Two "hosts" with two slots each: MPICH must see two nodes of two ranks.
run mapping -- mpiexec -launcher-exec "env HASHI_TEST_TEMPLATE_HOST={host}" -hosts alpha:2,beta:2 ./nodeinfo
expect_status mapping 0
expect_count mapping mapping.out "node_size=2 " 4
expect_in mapping mapping.out "^rank=0 node=alpha template=alpha node_size=2 node_rank=0 sum=10"
expect_in mapping mapping.out "^rank=3 node=beta template=beta node_size=2 node_rank=1 sum=10"

printf '# two nodes\nalpha slots=1\nbeta:3\n' > hosts
run hostfile -- mpiexec -f hosts -launcher-exec "env HASHI_TEST_TEMPLATE_HOST={host}" ./nodeinfo
expect_status hostfile 0
expect_count hostfile hostfile.out "node=beta .*node_size=3" 3
expect_count hostfile hostfile.out "node=alpha .*node_size=1" 1

run ppn -- mpiexec -n 4 -ppn 1 -hosts a,b,c,d -launcher-exec "env X={host}" ./nodeinfo
expect_count ppn ppn.out "node_size=1 " 4

run single-node -- mpiexec -n 3 ./nodeinfo
expect_count single-node single-node.out "node_size=3 " 3

mkdir -p elsewhere
run env -- env HASHI_INHERITED=yes mpiexec -genv G global -n 2 -env L local -wdir "$work/elsewhere" "$work/show_env" G L HASHI_INHERITED FI_PROVIDER PMI_FD
expect_status env 0
expect_count env env.out "cwd=$work/elsewhere G=global L=local HASHI_INHERITED=yes FI_PROVIDER=hashi PMI_FD=3" 2

run genvnone -- env HASHI_INHERITED=yes mpiexec -genvnone -genv PATH "$PATH" -n 1 ./show_env HASHI_INHERITED PATH
expect_in genvnone genvnone.out "HASHI_INHERITED=<unset> PATH="

run provider -- mpiexec -n 1 -provider "tcp;ofi_rxm" ./show_env FI_PROVIDER
expect_in provider provider.out "FI_PROVIDER=tcp;ofi_rxm"
run provider-env -- env HASHI_PROVIDER=tcp mpiexec -n 1 ./show_env FI_PROVIDER
expect_in provider-env provider-env.out "FI_PROVIDER=tcp"

run mpmd -- mpiexec -n 1 -env ROLE master ./show_env ROLE : -n 2 -env ROLE worker ./show_env ROLE
expect_status mpmd 0
expect_count mpmd mpmd.out "ROLE=master" 1
expect_count mpmd mpmd.out "ROLE=worker" 2

seq 1 100 > numbers
mpiexec -n 3 ./stdin_sum < numbers > stdin.out 2> stdin.err
status=$?
expect_status stdin 0
expect_count stdin stdin.out "sum 5050$" 3

# mpiexec started with stdin closed: rank 0 reads EOF, nothing else breaks.
mpiexec -n 2 ./stdin_sum > stdin-closed.out 2> stdin-closed.err <&-
status=$?
expect_status stdin-closed 0
expect_count stdin-closed stdin-closed.out "sum 0$" 2

run prefix -- mpiexec -l -n 2 ./show_env
expect_in prefix prefix.out "^\[0\] rank=0 "
expect_in prefix prefix.out "^\[1\] rank=1 "

run mpirun -- mpirun -np 2 ./show_env
expect_count mpirun mpirun.out "^rank=" 2

run verbose -- mpiexec -v -n 1 -launcher-exec "env X={host}" -hosts h1 ./show_env
expect_in verbose verbose.err "^mpiexec: rank 0 on h1: env X=h1 ./show_env"

run help -- mpiexec -help
expect_status help 0
expect_in help help.out "^Usage: mpiexec"
run version -- mpiexec -version
expect_in version version.out "Hashi MPI"

# start_waiting_job NAME N: mpiexec -n N ./wait_forever in the background
# (pid in $pid), back once every rank has said it is ready (at most 10 s).
start_waiting_job() {
    mpiexec -n "$2" ./wait_forever > "$1.out" 2> "$1.err" &
    pid=$!
    for _ in $(seq 1 100); do
        [[ $(grep -c ready "$1.out" 2>/dev/null) -eq $2 ]] && break
        sleep 0.1
    done
}

# Signals: SIGTERM to mpiexec reaches every rank; the job ends with 128+15.
start_waiting_job signal 3
kill -TERM $pid
wait $pid
status=$?
expect_status signal 143
expect_in signal signal.err "got signal 15 \(SIGTERM"
expect_count signal signal.out "^rank [0-2] got SIGTERM$" 3
sleep 0.3
if leftovers "$work/wait_forever"; then fail "ranks survived SIGTERM"; else pass "ranks gone after SIGTERM"; fi

# mpiexec killed outright (no chance to clean up): its ranks must not live on.
start_waiting_job orphan 2
kill -KILL $pid
wait $pid 2>/dev/null
sleep 0.5
if leftovers "$work/wait_forever"; then fail "ranks outlived a killed mpiexec: $(pgrep -af "$work/wait_forever")"; pkill -KILL -f "$work/wait_forever"; else pass "ranks die with a killed mpiexec"; fi

# The ranks start with no signal blocked (mpiexec blocks them for itself).
run sigmask -- mpiexec -n 1 grep -E '^SigBlk' /proc/self/status
expect_in sigmask sigmask.out "^SigBlk:[[:space:]]+0+$"
finish
