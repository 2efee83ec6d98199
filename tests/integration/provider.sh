#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The hashi libfabric provider: found by libfabric, chosen by MPICH with
# tagged messages and RMA, carrying jobs between separate nodes, writing its
# statistics, and surviving dead peers and malformed input.
source "$(dirname "$0")/lib.sh"
: "${HASHI_BUILDDIR:?HASHI_BUILDDIR must point at the build tree (make check sets it)}"
provdir="$HASHI_PREFIX/lib/hashi/fi"

preload=()
[[ -n ${HASHI_ASAN_RUNTIME:-} ]] && preload=(LD_PRELOAD="$HASHI_ASAN_RUNTIME" ASAN_OPTIONS=detect_leaks=0)
run fi-info -- env "${preload[@]}" FI_PROVIDER_PATH="$provdir" fi_info -p hashi
expect_status fi-info 0
expect_in fi-info fi-info.out "provider: hashi"
expect_in fi-info fi-info.out "type: FI_EP_RDM"

# libfabric's own ping-pong (Debian's libfabric-bin), a program that knows
# nothing of MPI: RDM endpoints, an event queue, sends, injects and
# receives, every byte checked (-c), sizes from 64 B to 1 MiB.
pp_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
pp_key=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
pp_env=(env "${preload[@]}" FI_PROVIDER_PATH="$provdir" HASHI_JOB_KEY="$pp_key")
timeout 60 "${pp_env[@]}" fi_pingpong -p hashi -e rdm -I 20 -c -B "$pp_port" >pingpong-server.out 2>&1 &
pp_server=$!
sleep 0.5
run pingpong -- timeout 60 "${pp_env[@]}" fi_pingpong -p hashi -e rdm -I 20 -c -P "$pp_port" 127.0.0.1
wait "$pp_server"
pp_server_status=$?
expect_status pingpong 0
if [[ $pp_server_status -eq 0 ]]; then pass "pingpong: the server side exited 0"; else
    fail "pingpong: the server side exited $pp_server_status"; sed 's/^/    /' pingpong-server.out | head -20; fi
expect_count pingpong pingpong.out "^(64|256|1k|4k|64k|1m) +20 +=20 " 6

compile mpicc "$HASHI_SRCDIR/examples/hello.c" hello
compile mpicc "$programs/rma.c" rma
compile mpicc "$HASHI_SRCDIR/examples/isort.c" isort

# MPICH's own account of what it uses on hashi.
run capsets -- env MPIR_CVAR_CH4_OFI_CAPABILITY_SETS_DEBUG=1 mpiexec -n 2 -hosts a,b -launcher exec \
    -launcher-exec "env X={host}" ./hello
expect_status capsets 0
expect_in capsets capsets.out "libfabric provider: hashi"
expect_in capsets capsets.out "MPIDI_OFI_ENABLE_TAGGED: 1"
expect_in capsets capsets.out "MPIDI_OFI_ENABLE_RMA: 1"

# One-sided communication between four nodes, with per-peer statistics.
mkdir -p stats
run rma -- env FI_HASHI_STATS_DIR="$work/stats" mpiexec -n 4 -hosts n0,n1,n2,n3 -launcher exec \
    -launcher-exec "env HASHI_NODE_NAME={host}" ./rma
expect_status rma 0
expect_in rma rma.out "^rma: OK on 4 ranks"
nstats=$(ls stats/*.stats 2>/dev/null | wc -l)
if [[ $nstats -eq 4 ]]; then pass "rma: 4 statistics files"; else fail "rma: $nstats statistics files, expected 4"; fi
cat stats/*.stats >stats.all 2>/dev/null
expect_in stats stats.all "^# peer host pid tx_bytes"
run stats-summary -- hashi-info --stats "$work/stats"
expect_status stats-summary 0
expect_in stats-summary stats-summary.out "^total: 4 endpoints, .* RMA operations served"
# The idle policy's choice (engine/idle_wait.hpp): 4 ranks on this
# machine's CPUs, each file saying what it spun and why, hashi-info one line.
cpus=$(nproc)
expect_count idle-lines stats.all "^# idle spin_us (5|50) chosen crowded [01] ranks [1-4] cpus $cpus yields [0-9]+ naps [0-9]+$" 4
expect_in idle-summary stats-summary.out \
    "^waiting ranks: spin (5|50) us \(chosen, [1-4] ranks on $cpus CPUs(: crowded)?\) on [1-4](; .*)?; [0-9]+ yields and [0-9]+ naps in all$"
# The TCP_INFO columns (src/transport/tcp_telemetry.hpp), after the older
# ones: every peer reached over a connection (route "direct") has a
# congestion window, a smoothed round trip and a pacing rate above 0 (the
# kernel sets them once data has been acknowledged, and each rank put
# 4 MiB), RTOs a count or '-' (a kernel before 6.7).
expect_in stats stats.all "^# peer .* max_pacing_rate tcp_rtos tcp_lost tcp_retrans_out cwnd srtt_us pacing_rate$"
tcp_lines=$(awk '!/^#/ && $12 == "direct" { n++; if (NF == 19 && $17 > 0 && $18 > 0 && $19 > 0 && $14 ~ /^([0-9]+|-)$/) ok++ }
    END { printf "%d %d", n, ok }' stats.all)
read -r tcp_peers tcp_plausible <<<"$tcp_lines"
say "measured: TCP columns: $(awk '!/^#/ && $12 == "direct" { printf "cwnd %s srtt %s us pacing %s B/s rtos %s; ", $17, $18, $19, $14 }' stats.all | cut -c1-300)"
if [[ $tcp_peers -gt 0 && $tcp_plausible -eq $tcp_peers ]]; then
    pass "stats: all $tcp_peers direct peer lines have cwnd, srtt and pacing rate > 0"
else
    fail "stats: $tcp_plausible of $tcp_peers direct peer lines have cwnd, srtt and pacing rate > 0"
    sed 's/^/    /' stats.all | head
fi
run stats-tcp -- hashi-info --stats "$work/stats" --tcp
expect_status stats-tcp 0
expect_in stats-tcp stats-tcp.out "retx +rtos +lost +in retx +cwnd +srtt ms +pace MiB/s +limit MiB/s +route$"
expect_in stats-tcp stats-tcp.out "^total: 4 endpoints, [0-9]+ TCP retransmissions, ([0-9]+|unknown \(kernel before 6\.7\)) retransmission timeouts, [0-9]+ segments lost now$"
# A row: endpoint, peer, host, then retx rtos lost "in retx" cwnd srtt (ms).
if awk '$1 ~ /\.[0-9]+$/ && $2 ~ /^[0-9]+$/ && $8 + 0 > 0 && $9 + 0 > 0 { found = 1 } END { exit !found }' stats-tcp.out; then
    pass "stats-tcp: rows show cwnd and srtt"
else
    fail "stats-tcp: no row with cwnd and srtt > 0"; sed 's/^/    /' stats-tcp.out | head
fi
run stats-tcp-watch -- hashi-info --stats "$work/stats" --tcp --watch --count 1
expect_status stats-tcp-watch 0
expect_in stats-tcp-watch stats-tcp-watch.out "cwnd +srtt ms"
# Files written before the TCP columns still read: '?' in the TCP view;
# half of the TCP columns is an error that names the line.
mkdir -p oldstats badstats
printf '# peer host pid tx_bytes tx_msgs rx_bytes rx_msgs unexpected_max rendezvous rma_ops tcp_retransmits route max_pacing_rate\n1 n1 42 10 1 10 1 0 0 0 3 direct 0\n' \
    >oldstats/n0.41.stats
run stats-old -- hashi-info --stats "$work/oldstats" --tcp
expect_status stats-old 0
expect_in stats-old stats-old.out "^n0\.41 +1 +n1 +3 +\? +\? +\? +\? +\? +\? +- +direct$"
printf '1 n1 42 10 1 10 1 0 0 0 3 direct 0 5 1\n' >badstats/n0.41.stats
run stats-bad -- hashi-info --stats "$work/badstats"
expect_status stats-bad 1
expect_in stats-bad stats-bad.err "n0\.41\.stats:1: the TCP columns after max_pacing_rate are incomplete"
mkdir -p badidle
printf '# idle spin_us 5 chosen crowded yes\n' >badidle/n0.41.stats
run idle-bad -- hashi-info --stats "$work/badidle"
expect_status idle-bad 1
expect_in idle-bad idle-bad.err "n0\.41\.stats:1: not an idle line \(expected '# idle spin_us N chosen\|fixed"
run stats-missing -- hashi-info --stats "$work/nostats"
expect_status stats-missing 1
expect_in stats-missing stats-missing.err "not a directory \\(run the job with FI_HASHI_STATS_DIR="
# Each rank wrote 4 MiB to its neighbour: someone sent at least that much.
if awk '!/^#/ && $4 >= 4194304 { found = 1 } END { exit !found }' stats.all; then
    pass "stats: a peer line shows the 4 MiB put"
else
    fail "stats: no peer line with at least 4 MiB sent"; sed 's/^/    /' stats.all | head
fi

# Everything through the provider, also between ranks on one node.
run isort-nolocal -- env MPIR_CVAR_NOLOCAL=1 mpiexec -n 4 ./isort 262144
expect_in isort-nolocal isort-nolocal.out "VERIFICATION SUCCESSFUL"
# Small eager limit and chunks: rendezvous and chunking on every message.
run isort-rdv -- env MPIR_CVAR_NOLOCAL=1 FI_HASHI_EAGER_SIZE=0 FI_HASHI_CHUNK_SIZE=4096 mpiexec -n 3 ./isort 65536
expect_in isort-rdv isort-rdv.out "VERIFICATION SUCCESSFUL"
# Every run above asks epoll every round (the default); this one reads the
# busiest path first (engine/read_first.hpp).
run isort-read-first -- env MPIR_CVAR_NOLOCAL=1 FI_HASHI_READ_FIRST=1 mpiexec -n 3 ./isort 65536
expect_in isort-read-first isort-read-first.out "VERIFICATION SUCCESSFUL"

# Send coalescing (engine/send_coalescing.hpp, on by default): windows of
# small sends held and written together, every byte checked, on and off
# (FI_HASHI_SEND_COALESCE=0); then a burst after
# which rank 0 waits outside MPI until rank 1 has it all: the flusher thread
# (engine/held_flusher.hpp) must write what is held (rank 0 gives up after
# 30 s otherwise), and the statistics count the flush.
compile mpicc "$programs/burst.c" burst
mkdir -p burst-stats
rm -f burst-signal
run burst-coalesce -- env MPIR_CVAR_NOLOCAL=1 FI_HASHI_SEND_COALESCE=1 FI_HASHI_STATS_DIR="$work/burst-stats" \
    mpiexec -n 3 ./burst 20 "$work/burst-signal"
expect_status burst-coalesce 0
expect_in burst-coalesce burst-coalesce.out "^burst: ok \(3 ranks, 20 rounds"
cat burst-stats/*.stats >burst-stats.all 2>/dev/null
held=$(awk '/^# send_coalescing/ { n += $4 } END { print n + 0 }' burst-stats.all)
flushed=$(awk '/^# send_coalescing/ { n += $12 } END { print n + 0 }' burst-stats.all)
if [[ $held -gt 0 ]]; then pass "burst-coalesce: $held sends held"; else fail "burst-coalesce: no send was held"; fi
if [[ $flushed -gt 0 ]]; then pass "burst-coalesce: the flusher wrote held sends $flushed times"; else
    fail "burst-coalesce: the flusher never wrote (rank 0's burst left some other way)"; fi
rm -f burst-signal
run burst-plain -- env MPIR_CVAR_NOLOCAL=1 FI_HASHI_SEND_COALESCE=0 mpiexec -n 3 ./burst 5 "$work/burst-signal"
expect_status burst-plain 0
expect_in burst-plain burst-plain.out "^burst: ok"
run bad-coalesce -- env FI_HASHI_SEND_COALESCE=on mpiexec -n 1 ./hello
expect_in bad-coalesce bad-coalesce.err "FI_HASHI_SEND_COALESCE='on' is not a whole number from 0 to 1"

# Bad settings are named.
run bad-env -- env FI_HASHI_EAGER_SIZE=lots mpiexec -n 2 -hosts a,b -launcher exec -launcher-exec "env X={host}" ./hello
expect_in bad-env bad-env.err "FI_HASHI_EAGER_SIZE='lots' is not a whole number"
if [[ $status -ne 0 ]]; then pass "bad-env: non-zero exit ($status)"; else fail "bad-env: exit 0"; fi
run bad-read-first -- env FI_HASHI_READ_FIRST=yes mpiexec -n 1 ./hello
expect_in bad-read-first bad-read-first.err "FI_HASHI_READ_FIRST='yes' is not a whole number from 0 to 1"
run bad-iface -- env FI_HASHI_IFACE=nosuch0 mpiexec -n 1 ./hello
expect_in bad-iface bad-iface.err "FI_HASHI_IFACE=nosuch0: no such interface"
run bad-timeout -- env FI_HASHI_PEER_TIMEOUT=soon mpiexec -n 1 ./hello
expect_in bad-timeout bad-timeout.err "FI_HASHI_PEER_TIMEOUT='soon' is not a whole number from 0 to 86400"
run bad-heartbeat -- env FI_HASHI_PEER_TIMEOUT=5 FI_HASHI_HEARTBEAT=3 mpiexec -n 1 ./hello
expect_in bad-heartbeat bad-heartbeat.err "FI_HASHI_PEER_TIMEOUT=5 must be at least twice FI_HASHI_HEARTBEAT=3"
run bad-relays -- env HASHI_RELAYS=10.0.0.1:7000,gw1 mpiexec -n 1 ./hello
expect_in bad-relays bad-relays.err "HASHI_RELAYS='10.0.0.1:7000,gw1': entry 2 \\('gw1'\\) has no ':PORT'"
# Ranks behind relays talk to the ranks of their own cluster directly (the
# relay named here does not exist).
run relays-same-cluster -- env HASHI_RELAYS=127.0.0.1:9 mpiexec -n 2 -hosts a,b -launcher exec \
    -launcher-exec "env X={host}" ./hello
expect_status relays-same-cluster 0
run no-liveness -- env FI_HASHI_PEER_TIMEOUT=0 mpiexec -n 2 -hosts a,b -launcher exec -launcher-exec "env X={host}" ./hello
expect_status no-liveness 0

# Robustness, through the libfabric API with real processes.
robust="$HASHI_BUILDDIR/tests/transport/fi-robustness"
# The job's key, as mpiexec would hand it to the ranks: parent and child
# hold it; in the malformed checks raw clients play strangers (a random key)
# and members (this key).
key=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
robust="env HASHI_JOB_KEY=$key $robust"
if [[ -n ${HASHI_ASAN_RUNTIME:-} ]]; then
    robust="env LD_PRELOAD=$HASHI_ASAN_RUNTIME ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 $robust"
fi
run peer-death -- timeout 120 env FI_PROVIDER_PATH="$provdir" FI_PROVIDER=hashi $robust peer-death
expect_status peer-death 0
expect_in peer-death peer-death.err "lost peer 1 \(pid [0-9]+ on [^,]+, [0-9.]+:[0-9]+ \(cluster 0\)\)"
sed 's/^/    /' peer-death.out

run malformed -- timeout 120 env FI_PROVIDER_PATH="$provdir" FI_PROVIDER=hashi HASHI_JOB_ID=5eed $robust malformed
expect_status malformed 0
expect_in malformed malformed.err "refused a connection from [0-9.]+:[0-9]+: it could not prove it belongs to this job"
expect_in malformed malformed.err "refused a connection from [0-9.]+:[0-9]+: it asked for another endpoint"
expect_in malformed malformed.err "malformed frame: unknown frame type 99"
expect_in malformed malformed.err "malformed frame: tagged frame with [0-9]+ payload bytes"
expect_in malformed malformed.err "in the middle of a frame"
expect_in malformed malformed.err "dropped an incoming connection before its handshake: malformed frame"
# What a stranger claims about itself is never believed, so never logged.
if grep -q stranger malformed.err; then fail "malformed: the log repeats a stranger's claims"; else
    pass "malformed: nothing a stranger claimed reached the log"; fi
sed 's/^/    /' malformed.out

run crossing -- timeout 120 env FI_PROVIDER_PATH="$provdir" FI_PROVIDER=hashi FI_HASHI_DEBUG=1 $robust crossing
expect_status crossing 0
sed 's/^/    /' crossing.out
# Both sides dialled in most rounds, so the resolution was really exercised.
dials=$(grep -c "connecting to" crossing.err)
if [[ $dials -gt 30 ]]; then pass "crossing: $dials connection attempts for 30 rounds"; else
    fail "crossing: only $dials connection attempts for 30 rounds (connections did not cross)"; fi

run flow -- timeout 120 env FI_PROVIDER_PATH="$provdir" FI_PROVIDER=hashi $robust flow
expect_status flow 0
sed 's/^/    /' flow.out

run liveness -- timeout 120 env FI_PROVIDER_PATH="$provdir" FI_PROVIDER=hashi FI_HASHI_PEER_TIMEOUT=4 \
    FI_HASHI_HEARTBEAT=1 $robust liveness
expect_status liveness 0
expect_in liveness liveness.err "lost peer 1 \(pid [0-9]+ on [^,]+, [0-9.]+:[0-9]+ \(cluster 0\)\): no answer to liveness pings for 4\.[0-9] s while this process waits on it"
sed 's/^/    /' liveness.out

if leftovers "$work/(rma|isort|hello|burst)"; then fail "processes left behind"; else pass "no processes left behind"; fi
finish
