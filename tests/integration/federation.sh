# SPDX-License-Identifier: BSD-3-Clause
# One job across two "clusters" on this machine: impi-server and two
# mpiexec -client, each cluster with its own host names through the exec
# launcher. Checks global ranks, node ids, the job id, a real MPI exchange
# across clusters, and that every failure (wrong key or secret, a client
# rank used twice, a client that never comes, the server killed during the
# startup or the job, a malformed startup message) ends with a clear
# message, a non-zero exit, no hang and no process left behind.
source "$HASHI_SRCDIR/tests/integration/lib.sh"

for p in nodeinfo show_env wait_forever exit_code; do
    compile mpicc "$programs/$p.c" "$p"
done
compile mpicc "$HASHI_SRCDIR/examples/ring.c" ring
compile mpicc "$HASHI_SRCDIR/examples/isort.c" isort -lm

(umask 077 && echo "federation-test-secret-0123456789" > secret && echo "some-other-secret-0123456789" > wrong-secret)
export HASHI_IMPI_SECRET_FILE="$work/secret"
# Every step is bounded: a hang fails the test instead of blocking it.
limit=60

# start_server NAME ARGS...: impi-server in the background under timeout
# (pid of timeout in $server_pid, of impi-server in $server_real, address
# in $addr).
start_server() {
    local name=$1
    shift
    timeout $limit impi-server -host 127.0.0.1 "$@" > "$name.server.out" 2> "$name.server.err" &
    server_pid=$!
    addr=$(first_line "$name.server.out")
    [[ -n $addr ]] || fail "$name: impi-server printed no address"
    server_real=$(pgrep -P "$server_pid" impi-server)
}

# client NAME K HOSTS ARGS...: mpiexec -client K in the background (pid in
# $client_pid); its output in NAME.K.out/err.
client() {
    local name=$1 k=$2 hosts=$3
    shift 3
    timeout $limit mpiexec -client "$k" "$addr" -hosts "$hosts" -launcher exec \
        -launcher-exec "env HASHI_DEMO_HOST={host}" "$@" > "$name.$k.out" 2> "$name.$k.err" < /dev/null &
    client_pid=$!
}

# wait_status PID: waits and sets $status.
wait_status() {
    wait "$1"
    status=$?
}

# pair NAME HOSTS0 HOSTS1 PROGRAM...: a job of two clusters running the
# same program on all slots of their hosts; everything must succeed.
pair() {
    local name=$1 h0=$2 h1=$3 c0 c1
    shift 3
    start_server "$name" -server 2 -v
    client "$name" 0 "$h0" "$@"
    c0=$client_pid
    client "$name" 1 "$h1" "$@"
    c1=$client_pid
    wait_status $c0; expect_exit "$name" "client 0" $status 0
    wait_status $c1; expect_exit "$name" "client 1" $status 0
    wait_status $server_pid; expect_exit "$name" "impi-server" $status 0
    cat "$name.0.out" "$name.1.out" > "$name.out"
}

expect_exit() { # name what status expected-non-zero|N
    local name=$1 what=$2 st=$3 want=$4
    if [[ $want == nonzero ]]; then
        if [[ $st -ne 0 && $st -ne 124 ]]; then pass "$name: $what exited with $st"; else
            fail "$name: $what exited with $st (expected a failure, not success or a timeout)"; fi
    elif [[ $st -eq $want ]]; then pass "$name: $what exited with $st"; else
        fail "$name: $what exited with $st, expected $want"
    fi
}

no_leftovers() { # name: nothing of the test's programs, no impi-server
    local name=$1
    sleep 0.3
    for pid in $server_real; do
        if kill -0 "$pid" 2>/dev/null; then fail "$name: process $pid is still running"; kill -KILL "$pid"; fi
    done
    if leftovers "$work/"; then
        fail "$name: left behind: $(pgrep -af "$work/" | head -3)"
        pkill -KILL -f "$work/"
    else
        pass "$name: no process left behind"
    fi
}

## A good job: cluster 0 on hosts a0 (2 ranks) and a1 (1), cluster 1 on b0 (2).
pair good a0:2,a1:1 b0:2 ./nodeinfo
# World size 5 and a real Allreduce across clusters: every rank sums 1..5.
expect_count good good.out "sum=15$" 5
# Global ranks, contiguous per cluster: client 0 has 0-2, client 1 has 3-4.
expect_count good good.0.out "^rank=[0-2] node=a[01] " 3
expect_count good good.1.out "^rank=[34] node=b0 " 2
# Node ids from PMI_process_mapping: a0 holds 2, a1 1, b0 2.
expect_count good good.out "node=a0 .*node_size=2 " 2
expect_count good good.out "node=a1 .*node_size=1 " 1
expect_count good good.out "node=b0 .*node_size=2 " 2
expect_in good good.server.err "every client sent FINI"
no_leftovers good

## The same host name in both clusters is still two nodes.
pair samename n0:2 n0:2 ./nodeinfo
expect_count samename samename.out "node=n0 .*node_size=2 .*sum=10$" 4

## Environment: HASHI_CLUSTER_ID per cluster, one HASHI_JOB_ID for all.
pair env a0:1 b0:1 ./show_env HASHI_CLUSTER_ID HASHI_JOB_ID PMI_SIZE
expect_in env env.0.out "^rank=0 .* HASHI_CLUSTER_ID=0 HASHI_JOB_ID=[0-9a-f]{16} PMI_SIZE=2$"
expect_in env env.1.out "^rank=1 .* HASHI_CLUSTER_ID=1 HASHI_JOB_ID=[0-9a-f]{16} PMI_SIZE=2$"
id0=$(sed -n 's/.*HASHI_JOB_ID=\([0-9a-f]*\).*/\1/p' env.0.out)
id1=$(sed -n 's/.*HASHI_JOB_ID=\([0-9a-f]*\).*/\1/p' env.1.out)
if [[ -n $id0 && $id0 == "$id1" ]]; then pass "env: one job id in both clusters ($id0)"; else
    fail "env: job ids differ: '$id0' and '$id1'"; fi

## A single-cluster job: cluster 0 and a fresh id per job.
run single1 -- mpiexec -n 2 ./show_env HASHI_CLUSTER_ID HASHI_JOB_ID
run single2 -- mpiexec -n 1 ./show_env HASHI_CLUSTER_ID HASHI_JOB_ID
expect_count single1 single1.out "HASHI_CLUSTER_ID=0 HASHI_JOB_ID=[0-9a-f]{16}$" 2
j1=$(sed -n '1s/.*HASHI_JOB_ID=//p' single1.out)
j2=$(sed -n '1s/.*HASHI_JOB_ID=//p' single2.out)
if [[ -n $j1 && $j1 != "$j2" ]]; then pass "single: each job draws its own id"; else
    fail "single: job ids '$j1' and '$j2'"; fi

## ring across clusters, and the startup cost against one cluster of the
## same shape (same program, same rank count, 2+2 ranks on 4 "hosts").
t0=$(date +%s%N)
run ring-single -- timeout $limit mpiexec -n 4 -hosts a0:1,a1:1,b0:1,b1:1 -launcher exec \
    -launcher-exec "env HASHI_DEMO_HOST={host}" ./ring 0
t1=$(date +%s%N)
expect_in ring-single ring-single.out "over 4 ranks: OK"
t2=$(date +%s%N)
pair ring a0:1,a1:1 b0:1,b1:1 ./ring 0
t3=$(date +%s%N)
say "startup+finish of ring 0 on 4 ranks: one cluster $(((t1 - t0) / 1000000)) ms, two federated clusters $(((t3 - t2) / 1000000)) ms"
pair ring2 a0:1,a1:1 b0:1,b1:1 ./ring 100
expect_in ring2 ring2.0.out "^ring: token=600 after 100 laps over 4 ranks: OK"

# isort: all-to-all key exchange, half of it between the clusters.
pair isort a0:2 b0:2 ./isort 262144
expect_in isort isort.0.out "^isort: VERIFICATION SUCCESSFUL"

## A rank that fails in cluster 1 ends cluster 0's ranks too.
start_server rankfail -server 2
client rankfail 0 a0:2 -n 2 ./wait_forever
c0=$client_pid
client rankfail 1 b0:2 -n 2 ./exit_code 3 5 nofinalize
c1=$client_pid
wait_status $c1; expect_exit rankfail "client 1" $status 5
wait_status $c0; expect_exit rankfail "client 0" $status nonzero
wait_status $server_pid; expect_exit rankfail "impi-server" $status 1
expect_in rankfail rankfail.0.err "cluster 1 failed: rank 3 .* exited with status 5"
no_leftovers rankfail

# start_waiting_pair NAME: both clusters run wait_forever (2 ranks each),
# back once all 4 ranks are ready; mpiexec pids in $c0 and $c1.
start_waiting_pair() {
    local name=$1
    start_server "$name" -server 2
    client "$name" 0 a0:2 ./wait_forever
    c0=$client_pid
    client "$name" 1 b0:2 ./wait_forever
    c1=$client_pid
    for _ in $(seq 1 100); do
        [[ $(cat "$name.0.out" "$name.1.out" 2>/dev/null | grep -c ready) -eq 4 ]] && break
        sleep 0.1
    done
    expect_count "$name" <(cat "$name.0.out" "$name.1.out") "ready" 4
}

## SIGTERM to one cluster's mpiexec ends the other cluster too.
start_waiting_pair sigterm
kill -TERM "$(pgrep -P $c0 mpiexec)"
wait_status $c0; expect_exit sigterm "client 0" $status 143
wait_status $c1; expect_exit sigterm "client 1" $status nonzero
wait_status $server_pid; expect_exit sigterm "impi-server" $status 1
expect_in sigterm sigterm.1.err "cluster 0 failed: mpiexec of cluster 0 ended with status 143; killing the 2 ranks"
no_leftovers sigterm

## One cluster's mpiexec killed outright: the server sees it go before
## FINI and the other cluster is told.
start_waiting_pair sigkill
kill -KILL "$(pgrep -P $c0 mpiexec)"
wait_status $c0; expect_exit sigkill "client 0" $status nonzero
wait_status $c1; expect_exit sigkill "client 1" $status nonzero
wait_status $server_pid; expect_exit sigkill "impi-server" $status 1
expect_in sigkill sigkill.1.err "says: client 0 \(127.0.0.1:[0-9]+\) closed its connection before FINI"
no_leftovers sigkill

## Wrong secret: turned away at AUTH, with the reason on both sides.
start_server wrongsecret -server 1 -timeout 5
client wrongsecret 0 a0:1 -n 1 -impi-secret-file "$work/wrong-secret" ./nodeinfo
wait_status $client_pid; expect_exit wrongsecret "mpiexec" $status nonzero
expect_in wrongsecret wrongsecret.0.err "impi-server at 127.0.0.1:[0-9]+ says: authentication failed: the client does not hold the job's secret"
expect_in wrongsecret wrongsecret.server.err "turned away connection from 127.0.0.1:[0-9]+: authentication failed"
wait_status $server_pid; expect_exit wrongsecret "impi-server" $status 1
expect_in wrongsecret wrongsecret.server.err "client 0 did not join within 5 s"
no_leftovers wrongsecret

## Wrong IMPI key (the weak method, enabled on both sides).
start_server wrongkey -server 1 -timeout 5 -impi-auth-key -impi-key 1234
HASHI_IMPI_SECRET_FILE= client wrongkey 0 a0:1 -n 1 -impi-auth-key -impi-key 4321 ./nodeinfo
wait_status $client_pid; expect_exit wrongkey "mpiexec" $status nonzero
expect_in wrongkey wrongkey.0.err "wrong IMPI key"
kill $server_pid; wait $server_pid
no_leftovers wrongkey

## The weak methods are off unless switched on.
start_server noweak -server 1 -timeout 5
HASHI_IMPI_SECRET_FILE= client noweak 0 a0:1 -n 1 -impi-auth-none ./nodeinfo
wait_status $client_pid; expect_exit noweak "mpiexec" $status nonzero
expect_in noweak noweak.0.err "no common authentication method: the server accepts Hashi HMAC-SHA256"
kill $server_pid; wait $server_pid

## One client rank used twice: the job is aborted, both are told why.
start_server twice -server 2 -timeout 20
client twice 0 a0:1 -n 1 ./nodeinfo
c0=$client_pid
sleep 0.5
client twice2 0 b0:1 -n 1 ./nodeinfo
c1=$client_pid
wait_status $c0; expect_exit twice "first client 0" $status nonzero
wait_status $c1; expect_exit twice "second client 0" $status nonzero
wait_status $server_pid; expect_exit twice "impi-server" $status 1
expect_in twice twice.0.err "says: client rank 0 was claimed twice"
expect_in twice twice2.0.err "says: client rank 0 was claimed twice"
expect_in twice twice.server.err "client rank 0 was claimed twice: by client 0 \(127.0.0.1:[0-9]+\) and by connection from 127.0.0.1:[0-9]+"
no_leftovers twice

## A client that never comes: the timeout names it.
start_server missing -server 2 -timeout 3
client missing 0 a0:1 -n 1 ./nodeinfo
s=$(date +%s)
wait_status $client_pid; expect_exit missing "mpiexec" $status nonzero
wait_status $server_pid; expect_exit missing "impi-server" $status 1
expect_in missing missing.server.err "client 1 did not join within 3 s"
expect_in missing missing.0.err "says: client 1 did not join within 3 s"
if (($(date +%s) - s <= 10)); then pass "missing: ended within 10 s"; else fail "missing: took $(($(date +%s) - s)) s"; fi
no_leftovers missing

## The server killed during the startup.
start_server killstart -server 2
client killstart 0 a0:1 -n 1 ./nodeinfo
sleep 1
kill -KILL $server_real
wait $server_pid 2>/dev/null
wait_status $client_pid; expect_exit killstart "mpiexec" $status nonzero
expect_in killstart killstart.0.err "impi-server at 127.0.0.1:[0-9]+ closed the connection during the startup .*no rank was started"
no_leftovers killstart

## Ctrl-C while waiting for the other clusters: 128+2, the server told.
start_server sigint -server 2 -timeout 30
client sigint 0 a0:1 ./nodeinfo
sleep 1
kill -INT "$(pgrep -P $client_pid mpiexec)"
wait_status $client_pid; expect_exit sigint "mpiexec" $status 130
wait_status $server_pid; expect_exit sigint "impi-server" $status 1
expect_in sigint sigint.0.err "got signal 2 \(SIGINT.* while joining impi-server; no rank was started"
expect_in sigint sigint.server.err "client 0 \(127.0.0.1:[0-9]+\) closed its connection during the startup"
no_leftovers sigint

## The server killed while the job runs: both clusters kill their ranks.
start_waiting_pair killrun
kill -KILL $server_real
wait $server_pid 2>/dev/null
wait_status $c0; expect_exit killrun "client 0" $status nonzero
wait_status $c1; expect_exit killrun "client 1" $status nonzero
expect_in killrun killrun.0.err "lost the connection to impi-server at 127.0.0.1:[0-9]+ \(it closed the connection\); the job cannot go on without it; killing the 2 ranks"
expect_in killrun killrun.1.err "lost the connection to impi-server"
no_leftovers killrun

## A malformed startup message from a joined client (here a hand-made
## IMPI client on a bash socket): the job is aborted, the real client told.
start_server malformed -server 2 -timeout 20 -impi-auth-none
HASHI_IMPI_SECRET_FILE= client malformed 1 b0:1 -n 1 -impi-auth-none ./nodeinfo
c1=$client_pid
port=${addr##*:}
exec 3<>"/dev/tcp/127.0.0.1/$port"
# AUTH mask NONE, IMPI rank 0, then a COLL whose H_IPV6 comes before C_NHOSTS.
printf 'AUTH\x00\x00\x00\x04\x00\x00\x00\x01' >&3
printf 'IMPI\x00\x00\x00\x04\x00\x00\x00\x00' >&3
printf 'COLL\x00\x00\x00\x14\x00\x00\x20\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\x7f\x00\x00\x01' >&3
wait_status $c1; expect_exit malformed "client 1" $status nonzero
wait_status $server_pid; expect_exit malformed "impi-server" $status 1
exec 3<&-
expect_in malformed malformed.server.err "client 0 \(127.0.0.1:[0-9]+\) sent a malformed COLL: label 0x2000 came before C_NHOSTS"
expect_in malformed malformed.1.err "says: client 0 .* sent a malformed COLL"

## A lying length from a stranger: turned away, the job goes on.
start_server liar -server 1 -timeout 20
exec 3<>"/dev/tcp/127.0.0.1/${addr##*:}"
printf 'AUTH\xff\xff\xff\xff' >&3
sleep 0.3
exec 3<&-
client liar 0 a0:1 -n 1 ./nodeinfo
wait_status $client_pid; expect_exit liar "mpiexec" $status 0
wait_status $server_pid; expect_exit liar "impi-server" $status 0
expect_in liar liar.server.err "turned away connection from 127.0.0.1:[0-9]+: malformed message: AUTH with a payload of 4294967295 bytes \(at most 64 allowed\)"
no_leftovers liar

## Usage errors.
run noclient -- mpiexec -impi-secret-file "$work/secret" -n 1 ./nodeinfo
expect_status noclient 2
expect_in noclient noclient.err "the -impi-\* options belong to a federated job"
chmod 644 wrong-secret
run openfile -- mpiexec -client 0 127.0.0.1:1 -impi-secret-file "$work/wrong-secret" -n 1 ./nodeinfo
expect_status openfile 2
expect_in openfile openfile.err "can be read by other users; run chmod 600"
run nosecret -- env -u HASHI_IMPI_SECRET_FILE impi-server -server 2
expect_status nosecret 2
expect_in nosecret nosecret.err "no authentication method: give the job's secret with -impi-secret-file"
finish
