#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# A gateway's WAN link is split over the relay's sending trunks, not over
# its open ones (relay/relay/trunk_pacing.hpp): 3 private clusters (strict
# mode) of one node and one gateway each, so every relay has two trunks on
# one link, paced at the testbed's WAN rate (hashi-grid-run --trunk-rate
# wan, 100 Mbit/s: 92000 kbit/s of payload). Cluster 0 sending to cluster 1
# alone keeps the whole rate on that trunk (before the fix both trunks got
# half as soon as they opened); sending to both clusters at once halves
# both. Read from cluster 0's relay at -v ("paced at N kbit/s"); timing is
# bench/relay/run-trunk-share's.
source "$HASHI_SRCDIR/tests/integration/lib.sh"

if [[ $(id -u) -ne 0 ]]; then
    say "SKIP: needs root to create network namespaces (run make check as root)"
    exit 77
fi
tb="$HASHI_PREFIX/bin/hashi-testbed"
export HASHI_TESTBED_INSTANCE=sharetest
trap '"$tb" down >/dev/null 2>&1' EXIT

run up -- "$tb" up --clusters 3 --nodes 1 --gateways 1 --mode strict --wan-rate 100 --node-rate 1000 --wan-delay 2 --realtime
expect_status up 0
compile mpicc "$HASHI_SRCDIR/bench/relay/trunk_load.c" trunk_load

# share NAME LOAD: 8 MiB out of cluster 0 with trunk_load LOAD, relays -v.
share() {
    run "$1" -- timeout 120 "$HASHI_PREFIX/bin/hashi-grid-run" -v --ppn 1 --trunk-rate wan --logs "logs.$1" \
        -n 3 ./trunk_load "$2" 8
    expect_status "$1" 0
    expect_in "$1" "$1.out" "^$2 8388608 "
    cat "logs.$1"/relay0.0.err >"$1.relay0" 2>/dev/null
}

share one streams
expect_count one-paced one.relay0 "trunk to relay 0 of cluster [12]: paced at 92000 kbit/s" 2
expect_count one-never-halved one.relay0 "paced at 46000 kbit/s" 0

share both fanout
expect_in both-halved both.relay0 "paced at 46000 kbit/s \(--wan-rate 100 Mbit/s over 2 sending trunks"

finish
