#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The guest half of bench/kmod/o2g-bench.sh: runs in the provider VM
# (tests/kmod/guest-provider-run.sh). Three receive paths, measured in
# turn in every round so that the emulator's drift hits them alike:
# `user` (FI_HASHI_RECV=user), `epoll` (the kernel backend posting
# through the module's posting ring, its progress asking epoll every round:
# FI_HASHI_O2G_RING_FIRST=0) and `ring` (the same, reading the completion
# ring before epoll while it moves, the default). Prints
# "BENCH name user X epoll Y ring Z ring/user R epoll/user Q", the median
# of the rounds.
#   bench-guest.sh WORK [quick|profile|fanin]   (WORK: hashi-p2p and the
#   examples, compiled on the host; quick: latency, message rate and system
#   calls per message only;
#   profile: perf of a message-rate run; fanin: receive bandwidth as the
#   senders grow, alone)
work=$1 what=${2:-1}
variants=(user epoll ring)
# O2G_BENCH_ROUNDS on the host, written next to the programs by
# o2g-bench.sh --prepare (the guest does not inherit the host's environment).
rounds=$(cat "$work/bench-rounds" 2>/dev/null || echo 3)
[[ $rounds =~ ^[1-9][0-9]?$ ]] || rounds=3
declare -A t vals fan msgs
# o2g_rfs=1 on the guest's command line (O2G_VM_APPEND="o2g_rfs=1"):
# receive flow steering on lo, so that the receive side's softirq (TCP, and
# the module's matching and copy) runs on the CPU of the process that uses
# the flow, as a NIC's interrupt steered to the receiving core would on a
# real node. Without it, loopback processes every packet on the sending
# CPU, inside the send call: the receiver's kernel work, which o2g moves
# into that softirq, is charged to the sender.
if grep -qw 'o2g_rfs=1' /proc/cmdline; then
    printf '%x\n' $(((1 << $(nproc)) - 1)) >/sys/class/net/lo/queues/rx-0/rps_cpus &&
        echo 32768 >/proc/sys/net/core/rps_sock_flow_entries &&
        echo 32768 >/sys/class/net/lo/queues/rx-0/rps_flow_cnt &&
        echo "BENCH # receive flow steering on lo: rps_cpus $(cat /sys/class/net/lo/queues/rx-0/rps_cpus)," \
            "rps_flow_cnt $(cat /sys/class/net/lo/queues/rx-0/rps_flow_cnt)" ||
        echo "BENCH # o2g_rfs=1: could not set receive flow steering on lo"
fi
counter() { cat "/sys/class/misc/o2g/counters/$1"; }
mpirun2() { # variant, launcher prefix, program args...
    local variant=$1 prefix=$2 backend=kernel first=on
    shift 2
    case $variant in
    user) backend=user ;;
    epoll) first=off ;;
    esac
    timeout 900 mpiexec -n 2 -launcher exec -launcher-exec "env HASHI_TEST_TEMPLATE_HOST={host} $prefix" -hosts n0,n1 \
        -genv FI_HASHI_RECV "$backend" -genv FI_HASHI_O2G_RING_FIRST "$first" -genv FI_HASHI_EAGER_SIZE 1048576 "$@"
}
# hashi-p2p BENCH SIZE: the value at SIZE.
p2p() { # variant bench size extra...
    local variant=$1 bench=$2 size=$3
    shift 3
    mpirun2 "$variant" "" "$work/hashi-p2p" --max-size "$size" "$@" "$bench" 2>/dev/null |
        awk -v b="$bench" -v s="$size" '$1 == b && $2 == s { print $4 }'
}
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
line() { # name user epoll ring how
    awk -v n="$1" -v u="$2" -v i="$3" -v r="$4" -v h="$5" 'BEGIN {
        printf "BENCH %-22s user %-9s epoll %-9s ring %-9s ring/user %.2f  epoll/user %.2f  (%s)\n", n, u, i, r,
            (u > 0 && r > 0) ? r / u : 0, (u > 0 && i > 0) ? i / u : 0, h }'
}

# profile: where the CPU goes in a message-rate run, user against ring
# (perf's cpu-clock over the whole guest, both ranks and the softirqs).
if [[ $what == profile ]]; then
    for v in user ring; do
        perf record -q -a -e cpu-clock -o "/tmp/perf-$v.data" &
        perf_pid=$!
        mpirun2 "$v" "" "$work/hashi-p2p" --max-size 8 --iters 50 --batches 3 msgrate >/dev/null 2>&1
        kill -INT "$perf_pid"
        wait "$perf_pid"
        perf report -q -i "/tmp/perf-$v.data" --stdio --sort comm,dso,sym 2>/dev/null | grep -v '^$' | head -40 |
            sed "s/^/BENCH profile $v /"
    done
    exit 0
fi
if [[ $what != fanin ]]; then
echo "BENCH # qemu TCG, $(nproc) vCPU: absolute numbers are the emulator's; compare within a line only"
echo "BENCH # load average in the guest: $(cut -d' ' -f1-3 /proc/loadavg); median of $rounds rounds, variants in turn"
# Iterations cut to what the emulator gets through in seconds (hashi-p2p's
# defaults are for real machines): same counts for every variant.
runs=("latency 8 200" "msgrate 8 50" "bw 65536 10" "bw 1048576 4")
[[ $what == quick ]] && runs=("${runs[@]:0:2}")
for run in "${runs[@]}"; do
    set -- $run
    for v in "${variants[@]}"; do vals[$v]=""; done
    for ((round = 0; round < rounds; round++)); do
        for v in "${variants[@]}"; do
            vals[$v]+=" $(p2p "$v" "$1" "$2" --batches 3 --iters "$3")"
        done
    done
    # shellcheck disable=SC2086 # the values of the rounds
    m=($(median ${vals[user]}) $(median ${vals[epoll]}) $(median ${vals[ring]}))
    case $1 in
    latency) line "latency-8B-us" "${m[@]}" "lower is better" ;;
    msgrate) line "msgrate-8B-kmsg/s" "${m[@]}" "higher is better" ;;
    bw) line "bw-$2B-MB/s" "${m[@]}" "higher is better" ;;
    esac
    echo "BENCH #   rounds: user${vals[user]}; epoll${vals[epoll]}; ring${vals[ring]}"
done

# System calls of the receiving rank (rank 1 of msgrate) per message, in
# the steady state: two runs, of 50 and 150 windows, and the difference of
# their counts over the difference of their messages (what the module
# delivered in the kernel runs; the same benchmark sends the same messages
# every time). A whole run's counts would be mostly start-up: libfabric
# alone reads /proc/kallsyms 1 KiB at a time at initialisation, some
# 10,000 read calls per process.
declare -A per_call
syscall_counts() { # strace -c file: "name count" per line, and "total N"
    awk '$NF == "total" { print "total", $4; next }
         $NF ~ /^[a-z_0-9]+$/ && $4 ~ /^[0-9]+$/ { print $NF, $4 }' "$1" 2>/dev/null
}
for v in "${variants[@]}"; do
    for iters in 50 150; do
        d0=$(counter delivered)
        mpirun2 "$v" "strace -f -c -o /tmp/strace-$v-$iters-{host}" "$work/hashi-p2p" --max-size 8 --iters "$iters" \
            --batches 1 msgrate >/dev/null 2>&1
        [[ $v != user ]] && msgs[$iters]=$(($(counter delivered) - d0))
    done
    # name -> calls in the long run minus calls in the short one (files, not
    # process substitution: the guest's chroot has no /dev/fd)
    syscall_counts "/tmp/strace-$v-150-n1" | sort >"/tmp/calls-$v-150"
    syscall_counts "/tmp/strace-$v-50-n1" | sort >"/tmp/calls-$v-50"
    per_call[$v]=$(join -a1 -e0 -o 0,1.2,2.2 "/tmp/calls-$v-150" "/tmp/calls-$v-50" | awk '{ print $1, $2 - $3 }')
done
m=$((${msgs[150]:-0} - ${msgs[50]:-0}))
for v in "${variants[@]}"; do
    awk -v m="$m" -v v="$v" '$1 == "total" { c = $2 } $1 ~ /^(recvfrom|recvmsg|readv|read)$/ { r += $2 }
        END { if (m > 0) printf "BENCH syscalls-per-message %-5s %.2f (recv/read %.2f), %d messages\n", v, c / m, r / m, m }' \
        <<<"${per_call[$v]}"
    # The calls behind it: name and count per message, most frequent first.
    awk -v m="$m" 'm > 0 && $1 != "total" && $2 > 0 { printf "%s %.2f\n", $1, $2 / m }' <<<"${per_call[$v]}" |
        sort -k2 -g -r | head -8 | tr '\n' ' ' | sed "s/^/BENCH #   $v per message: /; s/\$/\n/"
done

[[ $what == quick ]] && exit 0
for v in "${variants[@]}"; do
    t0=$(date +%s.%N)
    mpirun2 "$v" "" "$work/isort" >"/tmp/isort-$v.out" 2>&1
    t1=$(date +%s.%N)
    grep -q "VERIFICATION SUCCESSFUL" "/tmp/isort-$v.out" && ok=ok || ok=FAILED
    t[$v]=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
    echo "BENCH isort $v: ${t[$v]} s, $ok"
done
line "isort-seconds" "${t[user]}" "${t[epoll]}" "${t[ring]}" "lower is better"

# The pin-down cache: 1 MiB bandwidth (ring) with every lookup hitting
# (hashi-p2p reuses its buffers) against every lookup missing (the
# module's pin_cache_bypass: each receive pins and unpins its pages), in
# turn; then the hit ratio of the examples.
bypass=/sys/module/o2g/parameters/pin_cache_bypass
vals[hit]="" vals[miss]=""
for ((round = 0; round < rounds; round++)); do
    for mode in hit miss; do
        [[ $mode == miss ]] && echo 1 >$bypass
        vals[$mode]+=" $(p2p ring bw 1048576 --batches 3 --iters 4)"
        echo 0 >$bypass
    done
done
# shellcheck disable=SC2086
awk -v h="$(median ${vals[hit]})" -v m="$(median ${vals[miss]})" 'BEGIN {
    printf "BENCH pin-cache-bw-1MiB-MB/s    hits %-9s misses %-9s hits/misses %.2f  (PM: 1.38)\n", h, m, (m > 0) ? h / m : 0 }'
echo "BENCH #   rounds: hits${vals[hit]}; misses${vals[miss]}"
for ex in "ring 5" "pi 200000" "isort"; do
    h0=$(counter cache_hits) m0=$(counter cache_misses)
    # shellcheck disable=SC2086 # the program and its arguments
    mpirun2 ring "" "$work/"$ex >/dev/null 2>&1
    awk -v n="${ex%% *}" -v h=$(($(counter cache_hits) - h0)) -v m=$(($(counter cache_misses) - m0)) 'BEGIN {
        printf "BENCH pin-cache-hit-ratio %-6s %.3f (%d hits, %d misses)\n", n, (h + m) ? h / (h + m) : 0, h, m }'
done
fi # not fanin alone

# Receive bandwidth into one process as the senders grow: rank 0 on one
# node, the senders on the other, 64 KiB messages, 16 MiB in all.
for n in 1 4 16 64; do
    for v in user ring; do
        # 65 MPI processes start slowly under TCG (16 s on the 2-core host itself).
        out=$(timeout $((n > 16 ? 900 : 300)) mpiexec -n $((n + 1)) -launcher exec -launcher-exec "env HASHI_TEST_TEMPLATE_HOST={host}" \
            -hosts n0:1,n1:$n -genv FI_HASHI_RECV "$([[ $v == user ]] && echo user || echo kernel)" \
            -genv FI_HASHI_EAGER_SIZE 1048576 "$work/o2g-fanin" 65536 16777216 2>&1 | awk '$1 == "fanin" { print $4, $5 }')
        fan[$v]=${out:-failed}
    done
    echo "BENCH fanin $n user ${fan[user]} ring ${fan[ring]}"
done
