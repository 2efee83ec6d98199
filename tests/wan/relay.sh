#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# Relays (relay/README.md, "Relays"): one MPI job across two private
# clusters in the testbed's strict mode (no NAT, no forwarding: a node
# reaches nothing outside its cluster), 2 gateways per cluster, each running
# impi-relay; impi-server on c0gw's WAN address. Checks that the job runs
# through the relays (every pair, eager and rendezvous, every byte), that
# the trunks came up protected and carried the streams, that large messages
# are striped over both trunks and still match in order with the small ones
# between them, that strangers on
# either network are turned away without harm, and that a killed relay ends
# the job on both clusters within 30 s with a message naming it, leaving no
# process behind.
source "$HASHI_SRCDIR/tests/integration/lib.sh"

if [[ $(id -u) -ne 0 ]]; then
    say "SKIP: needs root to create network namespaces (run make check as root)"
    exit 77
fi
tb="$HASHI_PREFIX/bin/hashi-testbed"
export HASHI_TESTBED_INSTANCE=rlytest
cleanup() {
    pkill -f -- "$work/relay_job" 2>/dev/null
    "$tb" down >/dev/null 2>&1
}
trap cleanup EXIT

# Bad pacing settings and trunk orders are refused before anything
# starts: exit 2 and what was wrong.
relay_cmd=("$HASHI_PREFIX/bin/impi-relay" -relay 0 192.0.2.1:1 --cluster 0 -impi-secret 0123456789abcdef0123456789abcdef)
run bad-rate -- "${relay_cmd[@]}" --wan-rate fast
expect_status bad-rate 2
expect_in bad-rate bad-rate.err "option --wan-rate"
run bad-cc -- "${relay_cmd[@]}" --tcp-cc no_such_cc
expect_status bad-cc 2
expect_in bad-cc bad-cc.err "--tcp-cc no_such_cc: the kernel offers no such TCP congestion control \(available: .*cubic"
run bad-order -- env IMPI_RELAY_TRUNK_ORDER=lifo "${relay_cmd[@]}"
expect_status bad-order 2
expect_in bad-order bad-order.err "IMPI_RELAY_TRUNK_ORDER=lifo: use fair \(the default\) or fifo"

run up -- "$tb" up --clusters 2 --nodes 2 --gateways 2 --mode strict --wan-delay 5 --realtime
expect_status up 0
compile mpicc "$programs/relay_job.c" relay_job || {
    finish
    exit 1
}
secret="$work/job.secret"
(umask 077 && head -c 32 /dev/urandom | base64 >"$secret")

# wait_line FILE PATTERN: the first line of FILE once it matches (5 s).
wait_line() {
    local i
    for ((i = 0; i < 50; i++)); do
        if grep -Eq -- "$2" "$1" 2>/dev/null; then
            grep -Em1 -- "$2" "$1"
            return 0
        fi
        sleep 0.1
    done
    return 1
}

# Extra mpiexec options of the next job (-genv settings), and the relays'.
job_env=()
relay_opts=()

# job NAME ARGS...: impi-server on c0gw, relays 0 and 1 of both clusters on
# their gateways, one mpiexec -client per cluster at its leader relay's LAN
# address. Leaves NAME.{server,rC.I,cK}.{out,err}; $rc0 $rc1 $rcs.
job() {
    local name=$1 k i
    shift
    "$tb" exec c0gw impi-server -server 2 -host 198.18.0.1 -impi-secret-file "$secret" -v \
        >"$name.server.out" 2>"$name.server.err" &
    local server=$!
    local addr
    addr=$(wait_line "$name.server.out" ':') || {
        fail "$name: impi-server printed no address"
        return 1
    }
    local -a relay_pids=()
    for k in 0 1; do
        for i in 0 1; do
            local gw="c${k}gw"
            [[ $i == 0 ]] || gw="c${k}gw$i"
            "$tb" exec "$gw" impi-relay -relay "$i" "$addr" --cluster "$k" --relays 2 -impi-secret-file "$secret" -v "${relay_opts[@]}" \
                >"$name.r$k.$i.out" 2>"$name.r$k.$i.err" &
            relay_pids+=($!)
        done
    done
    local r0 r1
    r0=$(wait_line "$name.r0.0.out" ':') && r1=$(wait_line "$name.r1.0.out" ':') || {
        fail "$name: a relay printed no address"
        return 1
    }
    if [[ $name == pairs ]]; then
        # Strangers at a relay's LAN port (from a node) and WAN port (from
        # the other cluster's gateway) while the job starts and runs.
        local wan
        wan=$(wait_line "$name.r0.0.err" "as relay 0 of cluster 0" |
            sed -n 's/.*(LAN [0-9.:]*, WAN \([0-9.]*:[0-9]*\)).*/\1/p')
        "$tb" exec c0n1 python3 "$HASHI_SRCDIR/tests/wan/relay_stranger.py" "${r0%:*}" "${r0##*:}" lan 12 \
            >strangers.lan 2>&1 &
        "$tb" exec c1gw python3 "$HASHI_SRCDIR/tests/wan/relay_stranger.py" "${wan%:*}" "${wan##*:}" wan 12 \
            >strangers.wan 2>&1 &
        sleep 0.5
    fi
    local -a launch=(-impi-secret-file "$secret" -launcher exec -launcher-exec "$tb exec {host}" "${job_env[@]}")
    for k in 1 0; do
        local r=$r0
        [[ $k == 0 ]] || r=$r1
        (timeout 90 "$tb" exec "c${k}n0" mpiexec -client "$k" "$r" -hosts "c${k}n0:1,c${k}n1:1" "${launch[@]}" \
            "$work/relay_job" "$@" >"$name.c$k.out" 2>"$name.c$k.err"
            echo "$? $(date +%s.%N)" >"$name.c$k.end") &
    done
    fault_time=""
    if [[ -n ${fault:-} ]]; then
        wait_line "$name.c0.out" "traffic: iteration [1-9]" >/dev/null ||
            wait_line "$name.c0.out" "traffic: iteration [1-9]" >/dev/null
        eval "$fault"
        fault_time=$(date +%s.%N)
    fi
    # Each mpiexec has its own timeout of 90 s: both end by then.
    while [[ ! -f $name.c0.end || ! -f $name.c1.end ]]; do sleep 0.1; done
    rc0=$(cut -d' ' -f1 "$name.c0.end" 2>/dev/null) rc1=$(cut -d' ' -f1 "$name.c1.end" 2>/dev/null) rcs=0
    wait "$server" || rcs=$?
    relay_rc=()
    for i in "${relay_pids[@]}"; do
        local r=0
        wait "$i" || r=$?
        relay_rc+=("$r")
    done
    say "ran $name: clients $rc0/$rc1, server $rcs, relays ${relay_rc[*]}"
}

# The nodes are cut off: nothing but the relays can carry the job.
run isolated -- "$tb" exec c0n0 timeout 3 bash -c 'exec 3<>/dev/tcp/198.18.0.254/9'
if [[ $status != 0 ]]; then
    pass "strict mode: c0n0 cannot reach the WAN core"
else
    fail "strict mode: c0n0 reached the WAN core"
fi

# The first job's relays pace their trunks (--wan-rate 400: 92 % of 50 MB/s
# each, one trunk per relay) with reno: the rate is read back from the
# trunks' TCP_INFO in the relays' statistics, the congestion control from
# the socket.
mkdir -p "$work/pairs-stats"
job_env=(-genv FI_HASHI_STATS_DIR "$work/pairs-stats")
relay_opts=(--wan-rate 400 --tcp-cc reno --stats-dir "$work/pairs-stats")
job pairs
job_env=() relay_opts=()
if [[ $rc0 == 0 && $rc1 == 0 && $rcs == 0 ]]; then pass "pairs: both clusters and the server exited 0"; else
    fail "pairs: clients $rc0/$rc1, server $rcs"
    tail -n 12 pairs.c0.err pairs.c1.err pairs.server.err pairs.r*.err | sed 's/^/    /'
fi
expect_in pairs pairs.c0.out "^relay_job: OK \(4 ranks, every pair"
expect_count pairs <(cat pairs.c0.out pairs.c1.out) "^rank [0-3] on c[01]n[01] relays=10\.[01]\.0\.1:[0-9]+,10\.[01]\.0\.2:[0-9]+$" 4
for k in 0 1; do
    for i in 0 1; do
        expect_in "pairs-relay$k.$i" "pairs.r$k.$i.err" "trunk up to relay [01] of cluster $((1 - k)) \(integrity.*; TCP reno\)"
        expect_in "pairs-pacing$k.$i" "$work/pairs-stats/relay-$k.$i" "^$((1 - k)) $i [01]( [0-9]+){11} -?[0-9]+( [0-9]+){3} 46000000$"
        expect_in "pairs-relay$k.$i" "pairs.r$k.$i.err" "the job ended"
    done
done
if [[ ${relay_rc[*]} == "0 0 0 0" ]]; then pass "pairs: every relay exited 0 when the job ended"; else
    fail "pairs: relay exit statuses ${relay_rc[*]}"
fi
# Each relay counts the streams the other cluster's relays opened to it: the
# 4 pairs of ranks across the clusters need at least 4 in all.
streams=$(cat pairs.r*.err | sed -n 's/.* \([0-9]*\) streams opened.*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
if [[ $streams -ge 4 ]]; then pass "pairs: the trunks carried $streams streams"; else
    fail "pairs: the trunks carried $streams streams, at least 4 expected"; fi
grep -h "trunk to" pairs.r*.err | sed 's/^/    /'
run pairs-info -- "$HASHI_PREFIX/bin/hashi-info" --stats "$work/pairs-stats"
expect_status pairs-info 0
expect_count pairs-info pairs-info.out "^  [01]\.[01] +[01]\.[01] +(yes|no)( +[0-9.]+){7} +[0-9.]+ +368\.0$" 4

# The strangers got not one byte, the junk was closed, and the job above
# ran all the same.
wait
cat strangers.lan strangers.wan | sed 's/^/    /'
expect_count strangers <(cat strangers.lan strangers.wan) " received=0 closed=(yes|no)$" 7
expect_count strangers-closed <(cat strangers.lan strangers.wan) "^(lan|wan) [a-z-]*(job|version|junk) received=0 closed=yes$" 5

# Striping (FI_HASHI_STRIPE_MIN, src/transport/README.md "Striping"): one
# pair of ranks across the clusters exchanges 1 MiB and 300 KiB messages
# interleaved with small ones, same tag, some unexpected; every message
# matches in order, intact. The pair's stream is pinned to one trunk, so
# only striping puts its large messages on the other: each trunk must carry
# at least 30 % of what both carried (pinned, the other trunk carries only
# MPI_Init's and MPI_Finalize's few kilobytes; striped over 2 trunks, about
# half each; 30 % leaves room for the lanes' unequal shares under load).
job stripe stripe 12
if [[ $rc0 == 0 && $rc1 == 0 && $rcs == 0 ]]; then pass "stripe: both clusters and the server exited 0"; else
    fail "stripe: clients $rc0/$rc1, server $rcs"
    tail -n 12 stripe.c0.err stripe.c1.err | sed 's/^/    /'
fi
expect_in stripe stripe.c0.out "^relay_job: stripe: 12 rounds each way, in order and intact: yes"
# Each relay of cluster 0 has one trunk: its bytes out and in.
trunk_bytes() {
    sed -n 's/.*trunk to relay .*: \([0-9]*\) bytes \/ [0-9]* frames out, \([0-9]*\) bytes .*/\1 \2/p' "$1" |
        awk '{ s += $1 + $2 } END { print s + 0 }'
}
t0=$(trunk_bytes stripe.r0.0.err) t1=$(trunk_bytes stripe.r0.1.err)
if awk -v a="$t0" -v b="$t1" 'BEGIN { s = a + b; exit !(s > 0 && a >= 0.3 * s && b >= 0.3 * s) }'; then
    pass "stripe: both trunks carried the large messages ($t0 and $t1 bytes)"
else
    fail "stripe: the trunks carried $t0 and $t1 bytes: not striped (each at least 30 % expected)"
fi

# Liveness through the relays without a fault: each rank waits 7 s on a
# silent partner in the other cluster, with a peer timeout of 4 s, three
# times: before they have a connection, then with the waiting rank as the
# one that opened it, then as the one that accepted it. The pings and pongs
# go through the relays. A relay that carried pings only along streams the
# pinging rank had dialed declared live peers dead in the first and third
# rounds (seen in the README's main job under load).
job_env=(-genv FI_HASHI_HEARTBEAT 1 -genv FI_HASHI_PEER_TIMEOUT 4 -genv HASHI_COLL_PROBE off)
job quiet quiet 7
job_env=()
if [[ $rc0 == 0 && $rc1 == 0 && $rcs == 0 ]]; then pass "quiet: both clusters and the server exited 0"; else
    fail "quiet: clients $rc0/$rc1, server $rcs"
    tail -n 12 quiet.c0.err quiet.c1.err quiet.r*.err | sed 's/^/    /'
fi
expect_in quiet quiet.c0.out "^relay_job: quiet: waited 7 s on a silent partner 3 times"
expect_in quiet quiet.c0.out "^relay_job: OK \(4 ranks, every pair"
if grep -h "lost peer" quiet.c0.err quiet.c1.err | head -n 2 | sed 's/^/    /' | grep -q .; then
    fail "quiet: a live peer was declared lost"
else
    pass "quiet: no live peer was declared lost"
fi

# faulted NAME PATTERN: after a fault, both clusters' jobs ended within 30 s,
# not with success, one of them saying PATTERN (it names the relay or the
# trunk), and no rank or relay is left.
faulted() {
    local name=$1 pattern=$2 k
    if [[ -z $fault_time ]]; then
        fail "$name: the job never got going, so the fault was not applied"
        return
    fi
    for k in 0 1; do
        local end secs
        end=$(cut -d' ' -f2 "$name.c$k.end")
        secs=$(awk -v a="$fault_time" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
        if [[ $(cut -d' ' -f1 "$name.c$k.end") != 0 ]] && awk -v s="$secs" 'BEGIN { exit !(s <= 30) }'; then
            pass "$name: cluster $k's job ended $secs s after the fault (exit $(cut -d' ' -f1 "$name.c$k.end"))"
        else
            fail "$name: cluster $k's job: exit $(cut -d' ' -f1 "$name.c$k.end") $secs s after the fault"
        fi
    done
    if grep -Eh -- "$pattern" "$name".c[01].err | head -n 2 | sed 's/^/    /' | grep -q .; then
        pass "$name: the clusters were told: $(grep -Ehm1 -- "$pattern" "$name".c[01].err | cut -c1-220)"
    else
        fail "$name: no cluster's mpiexec said /$pattern/"
        tail -n 5 "$name".c[01].err "$name".r*.err | sed 's/^/    /'
    fi
    if pgrep -f -- "$work/relay_job|impi-relay -relay .* -impi-secret-file $secret" >/dev/null; then
        fail "$name: processes left: $(pgrep -af -- "$work/relay_job|impi-relay -relay" | tr '\n' ';')"
    else
        pass "$name: no rank or relay left"
    fi
}

# A relay killed: the server sees its connection end, the other relay its
# trunk; every cluster is told which relay.
# (This job's relay only: other jobs on the machine run relays too.)
fault='pkill -KILL -f -- "impi-relay -relay 1 .* --cluster 1 .*-impi-secret-file $secret "' job killrelay traffic 60
faulted killrelay "relay 1 of cluster 1"

# A trunk's WAN link down: the trunk falls silent, its relays declare it
# dead after 10 s and fail the job naming it.
fault='"$tb" link c1gw1 down 2>/dev/null' job linkdown traffic 60
faulted linkdown "trunk to relay 1 of cluster [01]"
"$tb" link c1gw1 up 2>/dev/null

finish
