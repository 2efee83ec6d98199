# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# The emulated clusters of hashi-testbed: 2 clusters x 2 nodes with 10 ms
# one-way WAN delay and 100 Mbit/s WAN rate. Measures the round trip and a
# bulk TCP transfer across the WAN (never faster than asked: no echo
# before the round trip, no transfer above the rate), a node's own rate, hostnames, an MPI job across both clusters
# through mpiexec's exec launcher; then, in private mode, that nodes are
# hidden from the other cluster but reach out through NAT; and that `down`
# leaves no namespace, mount, link or process behind.
# No `set -e`: lib.sh's checks record a failure and carry on, so one run
# reports every problem.
source "$HASHI_SRCDIR/tests/integration/lib.sh"

if [[ $(id -u) -ne 0 ]]; then
    say "SKIP: needs root to create network namespaces (run make check as root)"
    exit 77
fi
for tool in iperf3 iptables nsenter unshare; do
    if ! command -v "$tool" >/dev/null; then
        fail "$tool is not installed (scripts/install-deps installs it)"
        finish
        exit 1
    fi
done

tb="$HASHI_PREFIX/bin/hashi-testbed"
# An instance of its own, so a testbed someone has up, or another test's,
# is left alone; hashi-testbed (also as mpiexec's launch template) finds it
# through the environment.
export HASHI_TESTBED_INSTANCE=wantest
state=/run/hashi-testbed/wantest
ns_prefix=htb-wantest-
delay_ms=10
wan_mbit=100
node_mbit=200
trap '"$tb" down >/dev/null 2>&1; "$tb" -i wantestb down >/dev/null 2>&1' EXIT

# --- helpers ------------------------------------------------------------

# ICMP echo for when iputils' ping is not installed (Debian images lack it):
# prints one "time=X ms" line per reply, as ping does.
cat >icmp_echo.py <<'PY'
import os, select, socket, struct, sys, time
def checksum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xFFFF)
    return ~(s + (s >> 16)) & 0xFFFF
dst, count = sys.argv[1], int(sys.argv[2])
sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
ident = os.getpid() & 0xFFFF
for seq in range(count):
    body = struct.pack("!BBHHH", 8, 0, 0, ident, seq) + b"hashi-testbed-probe-pad-"
    pkt = body[:2] + struct.pack("!H", checksum(body)) + body[4:]
    start = time.monotonic()
    sock.sendto(pkt, (dst, 0))
    while time.monotonic() - start < 1.0:
        if not select.select([sock], [], [], 1.0 - (time.monotonic() - start))[0]:
            break
        data = sock.recv(2048)
        ihl = (data[0] & 15) * 4
        kind, _, _, rid, rseq = struct.unpack("!BBHHH", data[ihl:ihl + 8])
        if kind == 0 and rid == ident and rseq == seq:
            print("time=%.3f ms" % ((time.monotonic() - start) * 1000), flush=True)
            break
    time.sleep(0.2)
PY

# A TCP listener that prints the address of each peer, and a connector that
# exits 0 when it gets through within 3 s.
cat >tcp_probe.py <<'PY'
import socket, sys
if sys.argv[1] == "listen":
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", int(sys.argv[2])))
    srv.listen(8)
    print("listening", flush=True)
    while True:
        conn, peer = srv.accept()
        print("peer=%s" % peer[0], flush=True)
        conn.close()
else:
    try:
        socket.create_connection((sys.argv[2], int(sys.argv[3])), timeout=3).close()
    except OSError as e:
        print("cannot connect: %s" % e)
        sys.exit(1)
PY

# rtt NODE ADDRESS NAME: 11 echoes, the first dropped (it waits for ARP on
# both sides of the WAN); sets $rtt_median and prints the figures.
rtt() {
    local node=$1 addr=$2 name=$3
    if command -v ping >/dev/null; then
        "$tb" exec "$node" ping -n -c 11 -i 0.2 "$addr" >"$name.out" 2>&1
    else
        "$tb" exec "$node" python3 "$work/icmp_echo.py" "$addr" 11 >"$name.out" 2>&1
    fi
    local stats
    stats=$(grep -o 'time=[0-9.]*' "$name.out" | tail -n +2 | cut -d= -f2 | sort -g |
        awk '{ v[NR] = $1; s += $1 } END { if (NR) printf "%d %.2f %.2f %.2f %.2f", NR, v[1], s / NR, v[int((NR + 1) / 2)], v[NR] }')
    read -r rtt_count rtt_min rtt_avg rtt_median rtt_max <<<"${stats:-0 0 0 0 0}"
    say "measured: $name: $rtt_count replies, rtt min/avg/median/max = $rtt_min/$rtt_avg/$rtt_median/$rtt_max ms"
}

# between NAME VALUE LOW HIGH UNIT: the load-independent bounds of an
# emulated figure. A delay line never releases a frame early and a shaper
# never passes more than its rate, so the lower bound of a delay and the
# upper bound of a rate are tight; the other side is loose (2x), because
# other processes on the host's two cores make frames late and rates low,
# while a real defect (a delay applied twice, no delay or no shaping at
# all) still falls outside. The figures themselves are printed above.
between() {
    if awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(v >= lo && v <= hi) }'; then
        pass "$1: $2 $5 is between $3 and $4 $5"
    else
        fail "$1: $2 $5 is not between $3 and $4 $5"
    fi
}

# iperf NAME CLIENT SERVER SERVER_ADDRESS SECONDS: sets $mbit (receiver side).
iperf() {
    local name=$1 client=$2 server=$3 addr=$4 seconds=$5
    "$tb" exec "$server" iperf3 -s -1 -D -p 5201 -I "$work/$name.server.pid"
    for _ in $(seq 1 50); do
        # Asked of the server's side: a probe connection would use up -1.
        [[ -n $("$tb" exec "$server" ss -Hltn "sport = :5201" 2>/dev/null) ]] && break
        sleep 0.1
    done
    # -O 1: the first second (slow start) is not counted.
    "$tb" exec "$client" timeout $((seconds + 20)) iperf3 -c "$addr" -p 5201 -t "$seconds" -O 1 -J \
        >"$name.json" 2>"$name.err"
    mbit=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%.1f" % (d["end"]["sum_received"]["bits_per_second"] / 1e6))' \
        "$name.json" 2>/dev/null || echo 0)
    local retr
    retr=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["end"]["sum_sent"].get("retransmits", "?"))' \
        "$name.json" 2>/dev/null || echo "?")
    say "measured: $name: $mbit Mbit/s received over $seconds s ($retr retransmits)"
}

# gone NAME: after down, nothing of the testbed may remain.
check_gone() {
    local name=$1
    shift
    local left
    left=$(ip netns list | awk '{print $1}' | grep "^$ns_prefix" | tr '\n' ' ')
    if [[ -z $left ]]; then pass "$name: no $ns_prefix namespace left"; else fail "$name: namespaces left: $left"; fi
    if grep -q " $state/uts" /proc/self/mountinfo; then
        fail "$name: hostname namespace mounts left under $state/uts"
    else
        pass "$name: no mount left under $state/uts"
    fi
    if ip -o link | grep -q "$ns_prefix"; then fail "$name: links named $ns_prefix* left in the host"; else
        pass "$name: no $ns_prefix* link in the host namespace"; fi
    # An exited delay line may linger as a zombie until init reaps it (late,
    # on this machine): only a process in another state is left behind.
    local p alive="" st
    for p in "$@"; do
        st=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f1)
        if [[ -n $st && $st != Z ]]; then alive+="$p "; fi
    done
    if [[ -z $alive ]]; then pass "$name: no process left (checked $*)"; else
        fail "$name: processes left: $alive"; fi
}

# --- usage errors -------------------------------------------------------

run bad-clusters -- "$tb" up --clusters 0
expect_status bad-clusters 2
expect_in bad-clusters bad-clusters.err "number of clusters '0' is not a whole number from 1 to 16"
run bad-delay -- "$tb" up --wan-delay 10ms
expect_status bad-delay 2
expect_in bad-delay bad-delay.err "WAN delay '10ms' is not a number of milliseconds"
run bad-mode -- "$tb" up --mode public
expect_status bad-mode 2
run bad-tcp-cc -- "$tb" up --tcp-cc no_such_cc
expect_status bad-tcp-cc 2
expect_in bad-tcp-cc bad-tcp-cc.err "TCP congestion control 'no_such_cc' is not one the kernel offers \(available: .*reno"
echo "clusters = 2
wan_rate = 5" >bad.conf
run bad-config -- "$tb" up --config bad.conf
expect_status bad-config 2
expect_in bad-config bad-config.err "unknown parameter 'wan_rate'"
if command -v setpriv >/dev/null; then
    run not-root -- setpriv --reuid=65534 --regid=65534 --clear-groups bash "$tb" up
    expect_status not-root 1
    expect_in not-root not-root.err "must run as root"
fi

# --- routed clusters ----------------------------------------------------

started=$(date +%s.%N)
# Part from a config file, part from flags, which win over it.
cat >routed.conf <<CONF
# the WAN of the test
clusters = 2
nodes=2
wan_delay_ms = 3.5
wan_rate_mbit = $wan_mbit
mode = private   # overridden below
realtime = yes
CONF
run up-routed -- "$tb" up --config routed.conf --wan-delay "$delay_ms" --node-rate "$node_mbit" --mode routed
expect_status up-routed 0
say "measured: up took $(awk -v s="$started" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }') s"
sed 's/^/    /' up-routed.out
expect_in up-routed up-routed.out "^c1n1 +node +${ns_prefix}c1n1 +198\.19\.1\.11$"
expect_in up-routed up-routed.out "^c0gw +gateway .*198\.18\.0\.1 \(WAN side\)"

run status -- env -u HASHI_TESTBED_INSTANCE "$tb" --instance wantest status
expect_status status 0
expect_in status status.out "testbed 'wantest': 2 cluster\(s\) x 2 node\(s\), routed; WAN: 10 ms one-way \(20 ms round trip\)"

first_delayline=$(cat "$state/delayline-c0.pid" 2>/dev/null)
if chrt -p "${first_delayline:-0}" 2>&1 | grep -q SCHED_FIFO; then pass "realtime = yes: the delay lines run SCHED_FIFO"; else
    fail "realtime = yes, but the delay line is not SCHED_FIFO: $(chrt -p "${first_delayline:-0}" 2>&1)"; fi

for node in c0n0 c0n1 c1n0 c1n1 c0gw; do
    got=$("$tb" exec "$node" hostname 2>&1)
    if [[ $got == "$node" ]]; then pass "hostname on $node is $got"; else fail "hostname on $node is '$got'"; fi
done
run exec-unknown -- "$tb" exec c9n9 true
expect_status exec-unknown 1
expect_in exec-unknown exec-unknown.err "no node 'c9n9' in the testbed 'wantest' \(nodes: .*c0n0"

rtt c0n0 198.19.1.10 rtt-wan
between "round trip c0n0 -> c1n0 (fastest echo)" "$rtt_min" $((2 * delay_ms * 98 / 100)) $((4 * delay_ms)) ms
between "round trip c0n0 -> c1n0 (median)" "$rtt_median" $((2 * delay_ms * 98 / 100)) $((4 * delay_ms)) ms
rtt c0n0 198.19.0.11 rtt-lan
# No delay line inside a cluster: its fastest echo is far below the WAN's.
if awk -v v="$rtt_min" 'BEGIN { exit !(v < 2) }'; then pass "round trip inside a cluster is short ($rtt_min ms)"; else
    fail "round trip inside a cluster is $rtt_min ms at best, expected < 2 ms"; fi

iperf tcp-wan c0n0 c1n0 198.19.1.10 5
between "bulk TCP c0n0 -> c1n0" "$mbit" $((wan_mbit / 2)) $((wan_mbit * 105 / 100)) Mbit/s
iperf tcp-lan c0n0 c0n1 198.19.0.11 3
between "bulk TCP c0n0 -> c0n1 (node rate)" "$mbit" $((node_mbit / 2)) $((node_mbit * 105 / 100)) Mbit/s

# An idle WAN must cost no CPU: the delay lines sleep until a frame comes.
cpu_ticks() { # pid...: utime + stime of all of them
    local p t=0
    for p in "$@"; do t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null || echo 0))); done
    echo "$t"
}
mapfile -t delaylines < <(cat "$state"/delayline-c*.pid 2>/dev/null)
before=$(cpu_ticks "${delaylines[@]}")
sleep 2
idle_ticks=$(($(cpu_ticks "${delaylines[@]}") - before))
say "measured: the delay lines used $idle_ticks clock ticks of CPU in 2 s of idle WAN"
if [[ $idle_ticks -le 2 ]]; then pass "idle delay lines sleep"; else fail "idle delay lines used $idle_ticks ticks in 2 s"; fi

# An MPI job on both clusters, started through the exec launcher: where
# each rank runs, an Allreduce, and a ping-pong over the WAN.
cat >wan_job.c <<'C'
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, len, i;
    char host[MPI_MAX_PROCESSOR_NAME], byte = 0;
    double start = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(host, &len);
    long mine = rank + 1, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    /* Ping-pong between rank 0 and the last rank; the first exchange sets up the connection. */
    for (i = -1; i < 10 && (rank == 0 || rank == size - 1); i++) {
        if (i == 0)
            start = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(&byte, 1, MPI_CHAR, size - 1, 0, MPI_COMM_WORLD);
            MPI_Recv(&byte, 1, MPI_CHAR, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&byte, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&byte, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
        }
    }
    if (rank == 0)
        printf("rank=0 host=%s sum=%ld pingpong_rtt_ms=%.2f\n", host, sum, (MPI_Wtime() - start) / 10 * 1e3);
    else
        printf("rank=%d host=%s sum=%ld\n", rank, host, sum);
    MPI_Finalize();
    return 0;
}
C
if compile mpicc wan_job.c wan_job; then
    run mpi-wan -- mpiexec -timeout 120 -hosts c0n0:2,c1n0:2 -launcher exec -launcher-exec "$tb exec {host}" \
        -n 4 "$work/wan_job"
    expect_status mpi-wan 0
    sed 's/^/    /' mpi-wan.out
    expect_in mpi-wan mpi-wan.out "^rank=0 host=c0n0 sum=10 "
    expect_in mpi-wan mpi-wan.out "^rank=1 host=c0n0 sum=10$"
    expect_in mpi-wan mpi-wan.out "^rank=2 host=c1n0 sum=10$"
    expect_in mpi-wan mpi-wan.out "^rank=3 host=c1n0 sum=10$"
    mpi_rtt=$(sed -n 's/.*pingpong_rtt_ms=//p' mpi-wan.out)
    say "measured: MPI ping-pong c0n0 <-> c1n0: ${mpi_rtt:-?} ms per round trip"
    if awk -v v="${mpi_rtt:-0}" -v d=$((2 * delay_ms)) 'BEGIN { exit !(v >= d * 0.9) }'; then
        pass "MPI messages cross the WAN (ping-pong ${mpi_rtt} ms >= $((2 * delay_ms)) ms - 10%)"
    else
        fail "MPI ping-pong took ${mpi_rtt:-?} ms, less than the WAN round trip: not through the WAN?"
    fi
fi

# A second instance, up at the same time, must survive the first's down;
# its nodes run the congestion control asked for (reno: always built in).
run up-other -- "$tb" --instance wantestb up --clusters 1 --nodes 1 --wan-rate 0 --node-rate 0 --tcp-cc reno
expect_status up-other 0
expect_in up-other up-other.out "^tcp: congestion control reno$"
if [[ $("$tb" -i wantestb exec c0n0 sysctl -n net.ipv4.tcp_congestion_control 2>&1) == reno ]]; then
    pass "--tcp-cc reno is the nodes' congestion control"
else
    fail "--tcp-cc reno: c0n0 runs $("$tb" -i wantestb exec c0n0 sysctl -n net.ipv4.tcp_congestion_control 2>&1)"
fi
# The template replaces itself with the rank (no process in between), so
# mpiexec sees the real cause of a failure and the others are killed.
if compile mpicc "$programs/segv.c" segv; then
    run mpi-segv -- mpiexec -timeout 60 -hosts c0n0:2,c1n0:2 -launcher exec -launcher-exec "$tb exec {host}" \
        -n 4 "$work/segv" 3
    expect_status mpi-segv 139
    expect_in mpi-segv mpi-segv.err "rank 3 \(pid [0-9]+ on c1n0\) was killed by signal 11"
fi

"$tb" exec c1n1 sleep 600 &
sleep 0.3
run down-routed -- "$tb" down
expect_status down-routed 0
run status-other -- "$tb" -i wantestb status
expect_status status-other 0
if [[ $("$tb" -i wantestb exec c0n0 hostname 2>&1) == c0n0 ]]; then pass "the other instance still runs"; else
    fail "down of one instance broke another"; fi
run down-other -- "$tb" -i wantestb down
expect_status down-other 0
expect_in down-routed down-routed.err "killed [1-9][0-9]* process"
wait 2>/dev/null
check_gone down-routed "${delaylines[@]}"
grep -h "forwarded" "$state"/delayline-c*.log | sed 's/^/    /'
if grep -q "dropped because the queue was full" "$state"/delayline-c*.log &&
    ! grep -q " [1-9][0-9]* frames ([0-9]* bytes) dropped" "$state"/delayline-c*.log; then
    pass "the delay lines dropped nothing"
else
    fail "the delay lines dropped frames or left no statistics"
fi

# --- private clusters ---------------------------------------------------

run up-private -- "$tb" up --clusters 2 --nodes 2 --wan-delay "$delay_ms" --wan-rate "$wan_mbit" --mode private
expect_status up-private 0
expect_in up-private up-private.out "^c0n0 +node +${ns_prefix}c0n0 +10\.0\.0\.10$"

"$tb" exec c0n0 python3 "$work/tcp_probe.py" listen 7000 >listen-c0n0.out 2>&1 &
listener_node=$!
"$tb" exec wan python3 "$work/tcp_probe.py" listen 7001 >listen-wan.out 2>&1 &
listener_wan=$!
for _ in $(seq 1 50); do
    grep -q listening listen-c0n0.out 2>/dev/null && grep -q listening listen-wan.out 2>/dev/null && break
    sleep 0.1
done
run same-cluster -- "$tb" exec c0n1 python3 "$work/tcp_probe.py" connect 10.0.0.10 7000
expect_status same-cluster 0
run other-cluster -- "$tb" exec c1n0 python3 "$work/tcp_probe.py" connect 10.0.0.10 7000
if [[ $status -ne 0 ]]; then pass "c1n0 cannot reach private c0n0 directly ($(cat other-cluster.out))"; else
    fail "c1n0 reached private c0n0 at 10.0.0.10 directly"; fi
run nat-out -- "$tb" exec c0n0 python3 "$work/tcp_probe.py" connect 198.18.0.254 7001
expect_status nat-out 0
sleep 0.2
expect_in nat-out listen-wan.out "^peer=198\.18\.0\.1$"
rtt c0n0 198.18.0.254 rtt-nat
if [[ $rtt_count -gt 0 ]]; then pass "ICMP from private c0n0 to the WAN core goes through NAT ($rtt_median ms)"; else
    fail "no echo reply from the WAN core to private c0n0"; fi

# A crashed run: its state file lost, one delay line killed, processes
# still inside. The next up must clear all of it.
mapfile -t delaylines < <(cat "$state"/delayline-c*.pid 2>/dev/null)
kill -KILL "${delaylines[0]}"
sleep 0.1
run status-broken -- "$tb" status
expect_status status-broken 1
expect_in status-broken status-broken.err "is broken: a delay line died"
rm -f "$state/testbed.conf"
run up-after-crash -- "$tb" up --clusters 1 --nodes 1 --wan-rate 0 --node-rate 0
expect_status up-after-crash 0
wait "$listener_node" "$listener_wan" 2>/dev/null
left=$(ip netns list | awk '{print $1}' | grep -E "^${ns_prefix}c(0n1|1)" | tr '\n' ' ')
if [[ -z $left ]]; then pass "up removed the namespaces of the crashed run"; else fail "left from the crashed run: $left"; fi
mapfile -t -O "${#delaylines[@]}" delaylines < <(cat "$state"/delayline-c*.pid 2>/dev/null)

run down-last -- "$tb" down
expect_status down-last 0
wait 2>/dev/null
check_gone down-last "${delaylines[@]}" "$listener_node" "$listener_wan"
run status-down -- "$tb" status
expect_status status-down 3
finish
