#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# Several gateways per cluster, in strict mode: 2 clusters x 2 nodes with 3
# gateways each. Checks the names and address plan, that the nodes reach
# every gateway of their cluster and nothing beyond it (no NAT, no
# forwarding), that each pair of gateways meets across the WAN no sooner
# than the round trip, that each gateway's WAN link is its own (its own
# delay line carries its traffic, no transfer above the rate, a fault on one
# link leaves the others alone), the errors for bad input, and that `down`
# leaves no namespace, mount, link or process behind.
# No `set -e`: lib.sh's checks record a failure and carry on, so one run
# reports every problem.
source "$HASHI_SRCDIR/tests/integration/lib.sh"

if [[ $(id -u) -ne 0 ]]; then
    say "SKIP: needs root to create network namespaces (run make check as root)"
    exit 77
fi
# What the testbed itself needs, it checks (and names) in `up`.
if ! command -v iperf3 >/dev/null || ! command -v iptables >/dev/null; then
    fail "iperf3 and iptables are needed (scripts/install-deps installs them)"
    finish
    exit 1
fi
tb="$HASHI_PREFIX/bin/hashi-testbed"
# An instance of its own (gw*), so other tests' testbeds are left alone.
export HASHI_TESTBED_INSTANCE=gwtest
state=/run/hashi-testbed/$HASHI_TESTBED_INSTANCE     # as hashi-testbed names them
ns_prefix=htb-$HASHI_TESTBED_INSTANCE-
delay_ms=5   # one way
wan_mbit=100 # per gateway
trap '"$tb" down >/dev/null 2>&1' EXIT

# --- helpers ------------------------------------------------------------

# reach ADDRESS PORT COUNT: COUNT TCP connection attempts. An attempt has
# reached the host when it is accepted or refused (a refusal, RST, comes
# from the addressed host's own stack: nothing here forwards one), and
# prints "reached X ms", the handshake's round trip; otherwise it prints
# why not (no route, or nothing came back in 3 s). Exits 0 when every
# attempt reached the host.
cat >reach.py <<'PY'
import socket, sys, time
addr, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
reached = 0
for attempt in range(count):
    sock = socket.socket()
    sock.settimeout(3)
    start = time.monotonic()
    try:
        sock.connect((addr, port))
        why = None
    except ConnectionRefusedError:
        why = None
    except OSError as e:
        why = e.strerror or str(e)
    elapsed_ms = (time.monotonic() - start) * 1000
    sock.close()
    if why is None:
        reached += 1
        print("reached %.3f ms" % elapsed_ms, flush=True)
    else:
        print("unreachable: %s" % why, flush=True)
    if attempt + 1 < count:
        time.sleep(0.1)
sys.exit(0 if reached == count else 1)
PY
probe_port=9 # discard: nothing listens, so the host answers with a refusal

reaches() { # NAME NODE ADDRESS: NODE reaches ADDRESS (3 attempts)
    run "$1" -- "$tb" exec "$2" python3 "$work/reach.py" "$3" "$probe_port" 3
    if [[ $status -eq 0 ]]; then pass "$2 reaches $3"; else
        fail "$2 does not reach $3: $(sort -u "$1.out" | tr '\n' ' ')"; fi
}

# cannot_reach NODE ADDRESS...: one attempt per address, all at once (each
# that fails waits out its 3 s); none may get through.
cannot_reach() {
    local node=$1 addr
    shift
    for addr in "$@"; do
        "$tb" exec "$node" python3 "$work/reach.py" "$addr" "$probe_port" 1 >"isolated-$node-$addr.out" 2>&1 &
    done
    wait
    for addr in "$@"; do
        if grep -q '^unreachable' "isolated-$node-$addr.out"; then
            pass "$node cannot reach $addr ($(cat "isolated-$node-$addr.out"))"
        else
            fail "$node reached $addr: $(cat "isolated-$node-$addr.out")"
        fi
    done
}

# iperf3_server NODE: a one-shot iperf3 server on NODE, once it listens.
iperf3_server() {
    "$tb" exec "$1" iperf3 -s -1 -D -p 5201 -I "$work/iperf3-$1.pid"
    for _ in $(seq 1 50); do
        # Asked of the server's side: a probe connection would use up -1.
        [[ -n $("$tb" exec "$1" ss -Hltn "sport = :5201" 2>/dev/null) ]] && return 0
        sleep 0.1
    done
    fail "the iperf3 server on $1 does not listen"
}

# iperf3_figure FILE KEY: bits_per_second or bytes of iperf3's -J summary
# as the receiver saw it; 0 when the run left no summary.
iperf3_figure() {
    python3 -c 'import json, sys; print(int(json.load(open(sys.argv[1]))["end"]["sum_received"][sys.argv[2]]))' \
        "$1" "$2" 2>/dev/null || echo 0
}

# forwarded_bytes LINK GATEWAY: the bytes that LINK's delay line forwarded
# from GATEWAY to the WAN core, from the counts it logs when it stops.
forwarded_bytes() {
    local n
    n=$(sed -n "s|^hashi-delayline: ${ns_prefix}$2/wan0 -> ${ns_prefix}wan/$1: [0-9]* frames, \([0-9]*\) bytes forwarded.*|\1|p" \
        "$state/delayline-$1.log" 2>/dev/null)
    echo "${n:-0}"
}

# --- bad input ----------------------------------------------------------

for bad in 0 9 two; do
    run "bad-gateways-$bad" -- "$tb" up --gateways "$bad"
    expect_status "bad-gateways-$bad" 2
    expect_in "bad-gateways-$bad" "bad-gateways-$bad.err" "gateways per cluster '$bad' is not a whole number from 1 to 8"
done
echo "gateways = 12" >bad.conf
run bad-config -- "$tb" up --config bad.conf
expect_status bad-config 2
expect_in bad-config bad-config.err "gateways per cluster '12' is not a whole number from 1 to 8"
run bad-mode -- "$tb" up --mode open
expect_status bad-mode 2
expect_in bad-mode bad-mode.err "mode 'open' is not one of 'routed', 'private' or 'strict'"

# --- up: 2 clusters x 3 gateways, strict --------------------------------

run up -- "$tb" up --clusters 2 --nodes 2 --gateways 3 --mode strict --wan-delay "$delay_ms" --wan-rate "$wan_mbit"
expect_status up 0
sed 's/^/    /' up.out
run status -- "$tb" status
expect_status status 0
expect_in status status.out "2 cluster\(s\) x 2 node\(s\), strict; .* 3 gateway\(s\) per cluster$"
expect_in status status.out "^mode strict: cluster addresses 10\.C\.0\.0/24, no NAT, no forwarding"
expect_count status status.out " gateway +${ns_prefix}c[01]gw[12]? " 6
for c in 0 1; do
    for k in 0 1 2; do
        gw=c${c}gw$([[ $k -eq 0 ]] || echo "$k")
        expect_in status status.out "^$gw +gateway +$ns_prefix$gw +10\.$c\.0\.$((1 + k)) \(cluster side\), 198\.18\.0\.$((c + 1 + 16 * k)) \(WAN side\)$"
    done
done
expect_in status status.out "^c1n1 +node +${ns_prefix}c1n1 +10\.1\.0\.11$"
expect_count status status.out "^delay line c[01]gw[12]? <-> wan \(c[01](g[12])?\): pid [0-9]+, running$" 6
expect_in state "$state/testbed.conf" "^gateways=3$"

for gw in c0gw c0gw1 c0gw2 c1gw c1gw1 c1gw2; do
    got=$("$tb" exec "$gw" hostname 2>&1)
    if [[ $got == "$gw" ]]; then pass "hostname on $gw is $got"; else fail "hostname on $gw is '$got'"; fi
    forwarding=$("$tb" exec "$gw" sysctl -n net.ipv4.ip_forward 2>&1)
    nat=$("$tb" exec "$gw" iptables -t nat -S POSTROUTING 2>&1 | grep -c MASQUERADE)
    if [[ $forwarding == 0 && $nat == 0 ]]; then pass "$gw: IP forwarding off, no NAT"; else
        fail "$gw: ip_forward=$forwarding, $nat MASQUERADE rule(s)"; fi
done
run routes -- "$tb" exec c0n0 ip -4 route show default
expect_count routes routes.out "^default via 10\.0\.0\.1 dev eth0" 1
expect_count routes routes.out "^default" 1

# --- reachability: the LAN, and nothing beyond it -----------------------

for k in 1 2 3; do
    reaches "lan-$k" c0n0 "10.0.0.$k"
done
reaches lan-peer c0gw2 10.0.0.11
cannot_reach c0n0 198.18.0.254 198.18.0.2 198.18.0.17 10.1.0.1 10.1.0.2 10.1.0.10 10.1.0.11

# Gateway K of one cluster meets gateway K of the other over the WAN core
# subnet; the handshake crosses two delay lines each way, so it never
# comes back sooner than the round trip (a delay line never releases a
# frame early). The first attempt also waits for ARP and is not counted.
for k in 0 1 2; do
    gw=c0gw$([[ $k -eq 0 ]] || echo "$k")
    peer=198.18.0.$((2 + 16 * k))
    run "wan-$k" -- "$tb" exec "$gw" python3 "$work/reach.py" "$peer" "$probe_port" 11
    expect_status "wan-$k" 0
    read -r count fastest median < <(sed -n 's/^reached \([0-9.]*\) ms$/\1/p' "wan-$k.out" | tail -n +2 | sort -g |
        awk '{ v[NR] = $1 } END { printf "%d %.3f %.3f\n", NR, v[1], v[int((NR + 1) / 2)] }')
    say "measured: $gw -> $peer: $count handshakes, fastest $fastest ms, median $median ms (round trip $((2 * delay_ms)) ms)"
    if awk -v v="$fastest" -v lo="$((2 * delay_ms))" 'BEGIN { exit !(v >= lo * 0.98) }'; then
        pass "$gw -> $peer: the fastest round trip ($fastest ms) is at least 0.98 x $((2 * delay_ms)) ms"
    else
        fail "$gw -> $peer: a round trip of $fastest ms, shorter than the WAN's $((2 * delay_ms)) ms"
    fi
done

# --- independent WAN links ----------------------------------------------

# Two transfers at once, c0gw -> c1gw and c0gw1 -> c1gw1. Load-independent:
# neither exceeds the WAN rate, and each crosses its own gateway's delay
# line (counted below, after down, from the delay lines' own counts).
iperf3_server c1gw
iperf3_server c1gw1
"$tb" exec c0gw timeout 30 iperf3 -c 198.18.0.2 -p 5201 -t 3 -J >flow0.json 2>flow0.err &
"$tb" exec c0gw1 timeout 30 iperf3 -c 198.18.0.18 -p 5201 -t 3 -J >flow1.json 2>flow1.err &
wait
for f in 0 1; do
    flow_bits[f]=$(iperf3_figure "flow$f.json" bits_per_second)
    flow_bytes[f]=$(iperf3_figure "flow$f.json" bytes)
    say "measured: flow $f: ${flow_bytes[f]} bytes received at $(awk -v b="${flow_bits[f]}" 'BEGIN { printf "%.1f", b / 1e6 }') Mbit/s"
    if ((flow_bytes[f] > 0 && flow_bits[f] <= wan_mbit * 1050000)); then
        pass "flow $f: data came through, no faster than $wan_mbit Mbit/s x 1.05"
    else
        fail "flow $f: ${flow_bytes[f]} bytes at ${flow_bits[f]} bit/s (expected > 0 bytes, <= $((wan_mbit * 1050000)) bit/s)"
        sed 's/^/    /' "flow$f.err" | head -5
    fi
done
say "measured: both flows together: $(awk -v a="${flow_bits[0]}" -v b="${flow_bits[1]}" 'BEGIN { printf "%.1f", (a + b) / 1e6 }') Mbit/s"

# --- faults on one gateway's link ---------------------------------------

# one_fault NAME COMMAND GATEWAY BREAK REPAIR FROM PEER PATTERN: `COMMAND
# GATEWAY BREAK` cuts FROM's path to PEER and status says so (PATTERN),
# while c0gw still reaches c1gw over their own links; `COMMAND GATEWAY
# REPAIR` restores the path.
one_fault() {
    local name=$1 command=$2 gateway=$3 break=$4 repair=$5 from=$6 peer=$7 pattern=$8
    run "$name-$break" -- "$tb" "$command" "$gateway" "$break"
    expect_status "$name-$break" 0
    run "$name-status" -- "$tb" status
    expect_status "$name-status" 1
    expect_in "$name-status" "$name-status.out" "$pattern"
    cannot_reach "$from" "$peer"
    reaches "$name-other" c0gw 198.18.0.2
    run "$name-$repair" -- "$tb" "$command" "$gateway" "$repair"
    expect_status "$name-$repair" 0
    reaches "$name-repaired" "$from" "$peer"
    run "$name-status-repaired" -- "$tb" status
    expect_status "$name-status-repaired" 0
}
one_fault link link c1gw1 down up c0gw1 198.18.0.18 "^WAN link of c1gw1: DOWN"
mapfile -t delaylines < <(cat "$state"/delayline-c*.pid 2>/dev/null)
one_fault delayline delayline c0gw2 kill restart c0gw2 198.18.0.34 \
    "^delay line c0gw2 <-> wan \(c0g2\): pid [0-9]+, NOT RUNNING"
mapfile -t -O "${#delaylines[@]}" delaylines < <(cat "$state"/delayline-c0g2.pid 2>/dev/null)

# --- gateways that do not exist -----------------------------------------

run no-gw -- "$tb" link c0gw9 down
expect_status no-gw 2
expect_in no-gw no-gw.err "no gateway 'c0gw9' in testbed 'gwtest' .*cCgwK for K from 1 to 2"
run no-cluster -- "$tb" delayline c2gw1 kill
expect_status no-cluster 2
expect_in no-cluster no-cluster.err "no gateway 'c2gw1' .*C from 0 to 1"
run not-a-name -- "$tb" link c0gw0 down
expect_status not-a-name 2
expect_in not-a-name not-a-name.err "'c0gw0' is not a gateway name"
run exec-no-gw -- "$tb" exec c0gw3 true
expect_status exec-no-gw 1
expect_in exec-no-gw exec-no-gw.err "no node 'c0gw3' in the testbed 'gwtest' \(nodes: .*c0gw2"

# --- down ---------------------------------------------------------------

run down -- "$tb" down
expect_status down 0
wait 2>/dev/null
left=$(ip netns list | awk '{print $1}' | grep "^$ns_prefix" | tr '\n' ' ')
if [[ -z $left ]]; then pass "down: no $ns_prefix namespace left"; else fail "down: namespaces left: $left"; fi
if grep -q " $state/uts" /proc/self/mountinfo; then fail "down: mounts left under $state/uts"; else
    pass "down: no mount left under $state/uts"; fi
if ip -o link | grep -q "$ns_prefix"; then fail "down: links named $ns_prefix* left in the host"; else
    pass "down: no $ns_prefix* link in the host namespace"; fi
alive=""
for p in "${delaylines[@]}"; do
    st=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f1)
    if [[ -n $st && $st != Z ]]; then alive+="$p "; fi # a zombie awaits its reaper, init
done
if [[ -z $alive ]]; then pass "down: all ${#delaylines[@]} delay lines are gone"; else fail "down: delay lines left: $alive"; fi
if [[ -z $(ls "$state"/delayline-*.pid 2>/dev/null) ]]; then pass "down: no pid file left"; else
    fail "down: pid files left: $(ls "$state"/delayline-*.pid)"; fi

# Each flow crossed its own gateway's delay line and not the other's: a
# link's count includes its own flow (payload plus headers) and less than
# half of the other flow; c0gw2's link (restarted since) carried neither.
grep -h "forwarded" "$state"/delayline-c0*.log | sed 's/^/    /'
link_bytes=("$(forwarded_bytes c0 c0gw)" "$(forwarded_bytes c0g1 c0gw1)")
idle_bytes=$(forwarded_bytes c0g2 c0gw2)
for f in 0 1; do
    other=$((1 - f))
    say "measured: the delay line of gateway $f forwarded ${link_bytes[f]} bytes to the core; flow $f was ${flow_bytes[f]} bytes"
    if ((link_bytes[f] >= flow_bytes[f] && link_bytes[f] - flow_bytes[f] < flow_bytes[other] / 2)); then
        pass "flow $f went through gateway $f's own delay line only"
    else
        fail "gateway $f's delay line forwarded ${link_bytes[f]} bytes for flows of ${flow_bytes[f]} (own) and ${flow_bytes[other]} bytes"
    fi
done
say "measured: the delay line of c0gw2 forwarded $idle_bytes bytes to the core"
if ((idle_bytes < flow_bytes[0] / 2 && idle_bytes < flow_bytes[1] / 2)); then
    pass "neither flow went through c0gw2's delay line"
else
    fail "c0gw2's delay line forwarded $idle_bytes bytes, as much as a flow"
fi
finish
