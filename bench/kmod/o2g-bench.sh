#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# o2g against the user-space receive backend, in one VM boot (bench/kmod/
# README.md): hashi-p2p's 8-byte latency and message rate, bandwidth up to
# 1 MiB, system calls of the receiving rank per message (strace -c), and
# examples/isort, each with the user backend, the kernel backend asking
# epoll every progress round and the kernel backend reading its completion
# ring first (the default), in turn;
# the pin-down cache at 100 % hits against every lookup missing, its hit
# ratio for the examples, and receive bandwidth as the senders grow (plotted
# with gnuplot). The guest is qemu's TCG emulation: absolute figures mean
# nothing, only the ratios within the run.
#   bench/kmod/o2g-bench.sh              (HASHI_PREFIX: an installed or staged Hashi)
#   bench/kmod/o2g-bench.sh --prepare W  (o2g-provider-vm.sh: compile into W)
# Writes $HASHI_TEST_WORK/o2g-bench.txt, fanin.dat and fanin.png.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
: "${HASHI_PREFIX:?HASHI_PREFIX must point at an installed Hashi}"
if [[ ${1:-} == --prepare ]]; then
    "$HASHI_PREFIX/bin/mpicc" -O2 -o "$2/hashi-p2p" "$top"/bench/p2p/p2p_{main,latency,stream,exchange}.c
    "$HASHI_PREFIX/bin/mpicc" -O2 -o "$2/o2g-fanin" "$top"/bench/kmod/o2g_fanin.c
    # The guest sees only what is in W, not this environment.
    echo "${O2G_BENCH_ROUNDS:-3}" >"$2/bench-rounds"
    exit 0
fi
export O2G_BENCH=${O2G_BENCH:-1} # quick: latency and message rate only
[[ ${O2G_BENCH_ROUNDS:-3} =~ ^[1-9][0-9]?$ ]] ||
    { echo "o2g-bench: O2G_BENCH_ROUNDS='$O2G_BENCH_ROUNDS' is not a number of rounds from 1 to 99" >&2; exit 2; }
export HASHI_TEST_WORK=${HASHI_TEST_WORK:-${TMPDIR:-/tmp}/o2g-bench}
mkdir -p "$HASHI_TEST_WORK"
out=$HASHI_TEST_WORK/o2g-bench.txt
echo "# $(date -u '+%F %T UTC'), host load average $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$out"
"$top/tests/kmod/o2g-provider-vm.sh" | grep -E '^o2g-provider-vm: |^BENCH |passed' | tee -a "$out" || true
echo "# ended $(date -u '+%F %T UTC'), host load average $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out"
echo "(guest console: $HASHI_TEST_WORK/kmod-provider/guest.log)"

# Receive bandwidth against the number of senders.
awk '$1 == "BENCH" && $2 == "fanin" && $4 == "user" && $6 == "ring" { print $3, $5, $7 }' "$out" >"$HASHI_TEST_WORK/fanin.dat"
if [[ -s $HASHI_TEST_WORK/fanin.dat ]] && command -v gnuplot >/dev/null; then
    gnuplot <<PLOT
set terminal pngcairo size 800,500
set output "$HASHI_TEST_WORK/fanin.png"
set title "Receive bandwidth into one process (64 KiB messages, qemu TCG guest)"
set xlabel "sending peers (connections)"
set ylabel "MB/s (emulated: compare the lines only)"
set logscale x 2
set key bottom left
set yrange [0:*]
plot "$HASHI_TEST_WORK/fanin.dat" using 1:2 with linespoints title "user backend (epoll + recv)", \
     "" using 1:3 with linespoints title "o2g kernel backend (posting ring)"
PLOT
    echo "plot: $HASHI_TEST_WORK/fanin.png"
fi
