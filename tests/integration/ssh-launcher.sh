# SPDX-License-Identifier: BSD-3-Clause
# The ssh launcher against a real sshd: a private sshd on a free port with
# keys made for this run, two "hosts" (localhost and 127.0.0.1, so MPICH
# sees two nodes), PMI over TCP back to mpiexec, and a failing rank.
source "$HASHI_SRCDIR/tests/integration/lib.sh"

start_private_sshd

compile mpicc "$programs/nodeinfo.c" nodeinfo
compile mpicc "$programs/show_env.c" show_env
compile mpicc "$programs/segv.c" segv
compile mpicc "$programs/stdin_sum.c" stdin_sum
compile mpicc "$programs/affinity.c" affinity

run ssh-job -- mpiexec -launcher ssh -launcher-exec "$ssh_cmd" -hosts localhost:2,127.0.0.1:2 -n 4 \
    -genv PATH "$PATH" "$work/nodeinfo"
expect_status ssh-job 0
expect_count ssh-job ssh-job.out "node_size=2 .*sum=10$" 4
expect_in ssh-job ssh-job.out "^rank=0 node=localhost "
expect_in ssh-job ssh-job.out "^rank=3 node=127.0.0.1 "

run ssh-env -- mpiexec -launcher ssh -launcher-exec "$ssh_cmd" -hosts 127.0.0.1 -n 1 -genv G "a b" \
    -wdir /tmp "$work/show_env" G PMI_FD PMI_PORT FI_PROVIDER
expect_status ssh-env 0
# The shim hands the program its authenticated PMI connection; the program
# never dials the port itself.
expect_in ssh-env ssh-env.out "^rank=0 cwd=/tmp G=a b PMI_FD=3 PMI_PORT=<unset> FI_PROVIDER=hashi"

# Rank 0's stdin comes after what mpiexec hands the shim on the same pipe.
seq 1 100 | mpiexec -launcher ssh -launcher-exec "$ssh_cmd" -hosts 127.0.0.1,localhost -n 2 -genv PATH "$PATH" \
    "$work/stdin_sum" >ssh-stdin.out 2>ssh-stdin.err
status=$?
expect_status ssh-stdin 0
expect_count ssh-stdin ssh-stdin.out "^rank [01] sum 5050$" 2

# -bind-to over ssh: the shim on the rank's node binds it from that node's
# topology and reports it; each rank finds what was reported, a hardware
# thread of its own when the node has two.
run ssh-bind -- mpiexec -launcher ssh -launcher-exec "$ssh_cmd" -hosts 127.0.0.1:2 -n 2 -genv PATH "$PATH" \
    -bind-to hwthread -print-bindings "$work/affinity"
expect_status ssh-bind 0
for r in 0 1; do
    said=$(sed -n "s/^mpiexec: rank $r on 127.0.0.1 bound to cpus \([0-9]*\) (hwthread .*/\1/p" ssh-bind.err)
    found=$(sed -n "s/^affinity rank=$r node=127.0.0.1 cpus=//p" ssh-bind.out)
    if [[ -n $said && $said == "$found" ]]; then pass "ssh-bind: rank $r bound to cpu $said as reported"; else
        fail "ssh-bind: rank $r reported '$said', runs on '$found'"; sed 's/^/    /' ssh-bind.err ssh-bind.out; fi
done
if (($(nproc) >= 2)); then
    expect_count ssh-bind ssh-bind.out "cpus=[0-9]+$" 2
    [[ $(sort -u <(sed -n 's/.*cpus=//p' ssh-bind.out) | wc -l) -eq 2 ]] && pass "ssh-bind: two different cpus" ||
        fail "ssh-bind: both ranks on one cpu"
fi

run ssh-segv -- mpiexec -launcher ssh -launcher-exec "$ssh_cmd" -hosts localhost:2,127.0.0.1:2 -n 4 "$work/segv" 3
# The shim reports the real cause; ssh by itself would only say 255.
expect_status ssh-segv 139
expect_in ssh-segv ssh-segv.err "^mpiexec: rank 3 \(pid [0-9]+ on 127.0.0.1\) was killed by signal 11 \(SIGSEGV"
sleep 0.5
if leftovers "$work/segv"; then fail "ranks left behind after ssh-segv: $(pgrep -af "$work/segv")"; else pass "no rank left behind"; fi
finish
