# SPDX-License-Identifier: BSD-3-Clause
# impi-server under a flood (ARCHITECTURE.md section 11: junk and floods
# never stop the job). A stranger keeps 200 idle TCP connections open
# against the server from 100 addresses, opening again each one the
# server closes, and opens 50 junk connections a second (random bytes,
# forged proofs, a 16 MiB frame header, one byte then silence). While it
# does, a real federated job of 2 clusters (2 ranks each, an Allreduce
# across them) must start and finish correctly; the server's log must stay
# bounded; and nothing the stranger received may name the job (its id, the
# clients' addresses or ports). Then: the listen address options, and the
# startup deadline of a connection that never authenticates.
# The server before these limits refused every real client at once ("too
# many connections that have not joined yet"), so this test fails there.
source "$HASHI_SRCDIR/tests/integration/lib.sh"

compile mpicc "$programs/nodeinfo.c" nodeinfo || { finish; exit; }
(umask 077 && echo "flood-test-secret-0123456789abcdef" > secret)
export HASHI_IMPI_SECRET_FILE="$work/secret"
limit=60 # every step is bounded: a hang fails the test instead of blocking it

cleanup() {
    [[ -n ${flood_pid:-} ]] && kill -TERM "$flood_pid" 2>/dev/null
    [[ -n ${server_pid:-} ]] && kill -TERM "$server_pid" 2>/dev/null
    wait 2>/dev/null
}
trap cleanup EXIT

# start_server NAME ARGS...: impi-server in the background, its pid in
# $server_pid, its address in $addr, its output in NAME.out and NAME.err.
start_server() {
    local name=$1
    shift
    timeout $limit impi-server "$@" > "$name.out" 2> "$name.err" &
    server_pid=$!
    addr=$(first_line "$name.out")
    [[ -n $addr ]] || { fail "$name: impi-server printed no address"; finish; exit; }
}

## The job under the flood.
start_server server -host 127.0.0.1 -server 2 -v
mkdir -p flood
python3 "$HASHI_SRCDIR/tests/security/flood.py" "${addr##*:}" flood --idle 200 --sources 100 --junk-per-s 50 \
    > flood.log 2>&1 &
flood_pid=$!
for _ in $(seq 1 100); do
    [[ -f flood/ready ]] && break
    sleep 0.1
done
if [[ -f flood/ready ]]; then pass "the flood has opened its 200 idle connections"; else
    fail "the flood did not get its 200 connections established within 10 s"; sed 's/^/    /' flood.log | head; fi
sleep 1 # the flood at full strength: the server's pool is full and churning

start=$(date +%s%N)
for k in 0 1; do
    hosts=$([[ $k == 0 ]] && echo a0:2 || echo b0:2)
    timeout $limit mpiexec -v -client $k "$addr" -hosts "$hosts" -launcher exec \
        -launcher-exec "env HASHI_DEMO_HOST={host}" ./nodeinfo > job.$k.out 2> job.$k.err < /dev/null &
    client_pid[$k]=$!
done
wait "${client_pid[0]}"; st0=$?
wait "${client_pid[1]}"; st1=$?
job_ms=$((($(date +%s%N) - start) / 1000000))
wait "$server_pid"; sts=$?
server_pid=""
kill -TERM "$flood_pid"; wait "$flood_pid"
flood_pid=""
say "the federated job took $job_ms ms under the flood; flood: $(tr '\n' ' ' < flood/stats)"

if [[ $st0 -eq 0 && $st1 -eq 0 ]]; then pass "both clusters' mpiexec exited 0 under the flood"; else
    fail "mpiexec exited $st0 and $st1 under the flood"; sed 's/^/    /' job.0.err job.1.err | head -20; fi
if [[ $sts -eq 0 ]]; then pass "impi-server exited 0"; else
    fail "impi-server exited $sts"; tail -20 server.err | sed 's/^/    /'; fi
cat job.0.out job.1.out > job.out
expect_count flood job.out "^rank=[0-3] .*sum=10$" 4
for k in 0 1; do
    sed -n 's/.*joined impi-server at .* in \([0-9]*\) ms: .*/\1/p' job.$k.err | while read -r ms; do
        say "client $k joined in $ms ms"
    done
done
expect_in flood server.err "every client sent FINI"
# The flood really was there and was handled by the policy, not ignored.
expect_in flood server.err "closed connection from 127\.0\.2\.[0-9]+:[0-9]+: evicted"
expect_in flood server.err "turned away connection from 127\.0\.3\.|[0-9]+ (malformed|out of order|authentication failed)"
expect_in flood server.err "more connections from strangers were closed in the last [0-9]+ s"
opened=$(sed -n 's/^idle_opened=//p' flood/stats)
if [[ ${opened:-0} -gt 200 ]]; then pass "the server closed idle connections and the flood opened $opened in all"; else
    fail "the flood opened only ${opened:-0} idle connections (expected more than 200: some closed and opened again)"; fi

# Bounded log: at most 10 lines and a summary per 10 s for strangers, plus
# a handful for the job; the old server wrote a line per connection.
lines=$(wc -l < server.err)
bytes=$(wc -c < server.err)
say "impi-server wrote $lines lines ($bytes bytes) of log during the flood"
if [[ $lines -le 60 && $bytes -le 16384 ]]; then pass "the server's log stayed bounded ($lines lines)"; else
    fail "the server's log grew to $lines lines, $bytes bytes"; head -5 server.err | sed 's/^/    /'; fi

# Nothing sent to a stranger names the job: not its id (binary or hex),
# not the clients' addresses or ports.
job_id=$(sed -n 's/.*, job \([0-9a-f]\{16\}\)$/\1/p' job.0.err | head -1)
if [[ -n $job_id ]]; then pass "the job id is $job_id"; else fail "mpiexec -v printed no job id"; fi
received=$(wc -c < flood/received.bin)
if [[ $received -gt 0 ]]; then pass "strangers were answered ($received bytes in all)"; else
    fail "strangers received nothing at all (were the junk connections served?)"; fi
ports=$(sed -n 's/.*client [01] (127\.0\.0\.1:\([0-9]*\)).*/\1/p' server.err | sort -u | tr '\n' ' ')
leak=$(python3 - "$job_id" flood/received.bin $ports <<'PY'
import sys
job, path, ports = sys.argv[1], sys.argv[2], sys.argv[3:]
data = open(path, "rb").read()
needles = [b"127.0.0.1", b"client 0", b"client 1"]
if job:
    needles += [job.encode(), bytes.fromhex(job)]
needles += [(":" + p).encode() for p in ports]
print(" ".join(repr(n) for n in needles if n in data))
PY
)
if [[ -z $leak ]]; then pass "no byte sent to a stranger names the job, its clients or their ports"; else
    fail "strangers received $leak"; fi

## The listen address: another address than all of them, IPv6, long options.
run v6 -- timeout 10 impi-server --host=::1 -server 1 -timeout 1
expect_in v6 v6.out "^\[::1\]:[0-9]+$"
expect_in v6 v6.err "client 0 did not join within 1 s"
run lo2 -- timeout 10 impi-server --host 127.0.0.2 -server 1 -timeout 1 -auth-timeout 1
expect_in lo2 lo2.out "^127\.0\.0\.2:[0-9]+$"
run badopt -- impi-server -server 1 -max-unauth 0
expect_status badopt 2
expect_in badopt badopt.err "option -max-unauth .0. is not a whole number from 1 to 4096 connections"

## A connection that never authenticates is closed at its deadline, and
## gets nothing: not even a reason.
start_server slow -host 127.0.0.1 -server 1 -timeout 15 -auth-timeout 1
exec 3<>"/dev/tcp/127.0.0.1/${addr##*:}"
s=$(date +%s)
got=$(timeout 10 cat <&3 | wc -c)
took=$(($(date +%s) - s))
exec 3<&-
if [[ $got -eq 0 && $took -le 5 ]]; then pass "an idle stranger was closed after ${took} s with nothing said"; else
    fail "an idle stranger got $got bytes and was closed after $took s (expected none, at about 1 s)"; fi
expect_in slow slow.err "closed connection from 127\.0\.0\.1:[0-9]+: did not authenticate and join within -auth-timeout"
kill -TERM "$server_pid"; wait "$server_pid"
server_pid=""

if leftovers "$work/"; then fail "left behind: $(pgrep -af "$work/" | head -3)"; else
    pass "no process left behind"; fi
finish
