#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The guest half of bench/kmod/o2g-bench.sh: runs in the provider VM
# (tests/kmod/guest-provider-run.sh), each measurement with the user and the
# kernel backend back to back, and prints "BENCH name user kernel ratio".
#   bench-guest.sh WORK [quick]   (WORK: hashi-p2p and the examples, compiled
#   on the host; quick: latency and message rate only)
work=$1 what=${2:-1}
declare -A calls recv t
counter() { cat "/sys/class/misc/o2g/counters/$1"; }
mpirun2() { # backend, launcher prefix, program args...
    local backend=$1 prefix=$2
    shift 2
    timeout 900 mpiexec -n 2 -launcher exec -launcher-exec "env HASHI_TEST_TEMPLATE_HOST={host} $prefix" -hosts n0,n1 \
        -genv FI_HASHI_RECV "$backend" -genv FI_HASHI_EAGER_SIZE 1048576 "$@"
}
# hashi-p2p BENCH SIZE: the value at SIZE.
p2p() { # backend bench size extra...
    local backend=$1 bench=$2 size=$3
    shift 3
    mpirun2 "$backend" "" "$work/hashi-p2p" --max-size "$size" "$@" "$bench" 2>/dev/null |
        awk -v b="$bench" -v s="$size" '$1 == b && $2 == s { print $4 }'
}
ratio() { awk -v u="$2" -v k="$3" -v n="$1" -v h="$4" 'BEGIN {
    r = (u > 0 && k > 0) ? k / u : 0
    printf "BENCH %-28s user %-10s kernel %-10s kernel/user %.2f  (%s)\n", n, u, k, r, h }'; }

echo "BENCH # qemu TCG, 1 vCPU: absolute numbers are the emulator's; compare within a line only"
# Iterations cut to what the emulator gets through in seconds (hashi-p2p's
# defaults are for real machines): same counts for both backends.
runs=("latency 8 200" "msgrate 8 50" "bw 65536 10" "bw 1048576 4")
[[ $what == quick ]] && runs=("${runs[@]:0:2}")
for run in "${runs[@]}"; do
    set -- $run
    u=$(p2p user "$1" "$2" --batches 3 --iters "$3")
    k=$(p2p kernel "$1" "$2" --batches 3 --iters "$3")
    case $1 in
    latency) ratio "latency-8B-us" "$u" "$k" "lower is better" ;;
    msgrate) ratio "msgrate-8B-kmsg/s" "$u" "$k" "higher is better" ;;
    bw) ratio "bw-$2B-MB/s" "$u" "$k" "higher is better" ;;
    esac
done

[[ $what == quick ]] && exit 0
# System calls of the receiving rank (rank 1 of msgrate), per message: the
# message count is what the module delivered in the kernel run (the same
# benchmark sends the same messages both times).
for backend in user kernel; do
    d0=$(counter delivered)
    mpirun2 "$backend" "strace -f -c -o /tmp/strace-$backend-{host}" "$work/hashi-p2p" --max-size 8 --iters 50 --batches 1 msgrate >/dev/null 2>&1
    [[ $backend == kernel ]] && msgs=$(($(counter delivered) - d0))
    calls[$backend]=$(awk '$NF == "total" { print $(NF-2) }' "/tmp/strace-$backend-n1" 2>/dev/null)
    recv[$backend]=$(awk '$NF ~ /^(recvfrom|recvmsg|readv|read)$/ { n += $4 } END { print n + 0 }' "/tmp/strace-$backend-n1" 2>/dev/null)
done
echo "BENCH receiver syscalls (msgrate 8 B, $msgs messages): user ${calls[user]} (recv/read ${recv[user]}), kernel ${calls[kernel]} (recv/read ${recv[kernel]})"
awk -v m="$msgs" -v ru="${recv[user]}" -v rk="${recv[kernel]}" -v u="${calls[user]}" -v k="${calls[kernel]}" 'BEGIN { if (m > 0)
    printf "BENCH syscalls-per-message        user %.2f (recv %.2f)  kernel %.2f (recv %.2f)\n", u / m, ru / m, k / m, rk / m }'

for backend in user kernel; do
    t0=$(date +%s.%N)
    mpirun2 "$backend" "" "$work/isort" >"/tmp/isort-$backend.out" 2>&1
    t1=$(date +%s.%N)
    grep -q "VERIFICATION SUCCESSFUL" "/tmp/isort-$backend.out" && ok=ok || ok=FAILED
    t[$backend]=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
    echo "BENCH isort $backend: ${t[$backend]} s, $ok"
done
ratio "isort-seconds" "${t[user]}" "${t[kernel]}" "lower is better"
