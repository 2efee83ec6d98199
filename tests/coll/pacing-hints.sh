#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A pacing hint reaches the socket (src/coll/pacing.hpp, hints.cpp): the
# job's budget (HASHI_WAN_RATE / HASHI_WAN_SENDERS), the info keys
# hashi_wan_rate / hashi_wan_senders, GridMPI's YAMPI_PSP_MATB and
# YAMPI_PSP_MAXRATE attributes and psp_set_limit each set the pacing limit
# of rank 0's connection to the other cluster, read back from TCP_INFO
# (tcpi_max_pacing_rate) by the program itself; the statistics name the
# reason; FI_HASHI_WAN_PACING=0 sets no limit; a malformed hint is
# ignored with a warning; an unknown congestion control stops the job
# with a message naming the available ones.
source "$HASHI_SRCDIR/tests/integration/lib.sh"

compile mpicc "$HASHI_SRCDIR/tests/coll/pace_hint.c" pace_hint || { finish; exit; }

# Rank 0 in cluster 0, rank 1 in cluster 1, on this host.
two_clusters() { # [VAR=value ...] -- mode
    local envs=()
    while [[ $1 != -- ]]; do envs+=("$1"); shift; done
    env HASHI_COLL_PROBE=off "${envs[@]}" timeout -k 5 120 mpiexec -launcher exec \
        -launcher-exec "env HASHI_TEST_HOST={host}" -hosts c0n0:1,c1n0:1 \
        -n 1 -env HASHI_CLUSTER_ID 0 ./pace_hint "$2" : -n 1 -env HASHI_CLUSTER_ID 1 ./pace_hint "$2"
}
# hint NAME MODE RATE [VAR=value ...]: the share RATE (bytes/s of the WAN
# link) is on a socket of rank 0 as the payload rate the provider paces it
# to: 92 % of it (engine/wan_pacing.cpp: frame headers and the other
# direction's acknowledgements take the rest).
hint() {
    local name=$1 mode=$2 rate=$3
    shift 3
    run "$name" -- two_clusters "$@" -- "$mode"
    expect_status "$name" 0
    expect_in "$name" "$name.out" "^pace_hint: limits:.* $((rate * 92 / 100))( |$)"
}

hint job none 5000000 HASHI_WAN_RATE=80 HASHI_WAN_SENDERS=2
hint info info 2500000
hint matb matb 3000000
hint maxrate maxrate 8000000 HASHI_WAN_SENDERS=2
hint psp-limit psp_limit 4000000

# The statistics say why: the job's budget, or the hint.
mkdir -p stats-info
hint info-stats info 2500000 FI_HASHI_STATS_DIR="$work/stats-info"
cat stats-info/*.stats >stats-info.all
expect_in info-stats stats-info.all "^# wan_pacing 2500000 info-hint payload 2300000 sending [0-9]+$"
run info-tcp -- hashi-info --stats stats-info --tcp
expect_in info-tcp info-tcp.out "^wan pacing: .* 2\.4 MiB/s \(info-hint\)$"

# Pacing off: no limit on any socket, whatever the hint.
run off -- two_clusters FI_HASHI_WAN_PACING=0 -- matb
expect_status off 0
expect_in off off.out "^pace_hint: limits:$"

# A process sending to two WAN peers at once splits its share over the two
# sockets (src/transport/send/sending_sockets.hpp): 8 Mbit/s is 1,000,000
# B/s, 920,000 of payload, 460,000 on each; alone again, a socket has it
# all. Rank 0 in cluster 0, ranks 1 and 2 in cluster 1.
run split -- env HASHI_COLL_PROBE=off HASHI_WAN_RATE=8 timeout -k 5 120 mpiexec -launcher exec \
    -launcher-exec "env HASHI_TEST_HOST={host}" -hosts c0n0:1,c1n0:2 \
    -n 1 -env HASHI_CLUSTER_ID 0 ./pace_hint split : -n 2 -env HASHI_CLUSTER_ID 1 ./pace_hint split
expect_status split 0
expect_in split split.out "^pace_hint: both sending: limits: 460000 460000$"
expect_in split split.out "^pace_hint: one sending: limits:.* 920000( |$)"

# A malformed hint: ignored, with a warning naming it.
run bad-info -- two_clusters -- bad_info
expect_status bad-info 0
expect_in bad-info bad-info.err "warning on rank 0: info hashi_wan_rate='fast' is not a WAN rate in Mbit/s"
expect_in bad-info bad-info.out "^pace_hint: limits:$"
run bad-rate -- two_clusters HASHI_WAN_RATE=fast -- none
expect_status bad-rate 1
expect_in bad-rate bad-rate.err "HASHI_WAN_RATE='fast' is not a whole number.*the job's WAN budget in Mbit/s"

# A congestion control the kernel lacks: the job stops, naming the ones it has.
run bad-cc -- two_clusters FI_HASHI_WAN_CC=no_such_cc -- none
if [[ $status -ne 0 ]]; then pass "bad-cc: exit status $status"; else fail "bad-cc: exit status 0"; fi
expect_in bad-cc bad-cc.err "FI_HASHI_WAN_CC=no_such_cc: the kernel offers no such TCP congestion control \(available: .*cubic"
# One it has (cubic is built in): the job runs.
hint cc-cubic none 5000000 HASHI_WAN_RATE=80 HASHI_WAN_SENDERS=2 FI_HASHI_WAN_CC=cubic

finish
