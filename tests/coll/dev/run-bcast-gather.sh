#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs bcast_gather.c (built with the installed mpicc) on emulated clusters
# on this machine: fake hosts make MPICH see separate nodes, MPMD segments
# give each cluster its ranks. Every shape runs with the bcast algorithm
# forced to leader and to matsuda, allgather(v) and barrier to hier, and a
# few WAN sender caps and segment sizes.
# Usage: HASHI_PREFIX=<staged install> tests/coll/dev/run-bcast-gather.sh [large-count]
set -uo pipefail
: "${HASHI_PREFIX:?HASHI_PREFIX must point at an installed Hashi}"
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PATH="$HASHI_PREFIX/bin:$PATH"
mpicc -O2 -o "$work/bg" "$here/bcast_gather.c" || exit 1
large=${1:-300007}
failures=0

# shape: hosts | ranks per cluster | WAN senders | segment bytes
shapes=(
    "n0:2,n1:2|4|2|0"
    "n0:1,n1:2,n2:2|1 4|2|0"
    "n0:2,n1:1,n2:2|3 2|3|16384"
    "n0:2,n1:1,n2:1,n3:1,n4:2|3 2 2|2|4096"
    "n0:1,n1:1,n2:1,n3:2,n4:1,n5:1|2 1 3 1|3|20000"
    "n0:2,n1:2,n2:2,n3:2|4 4|1|0"
)
for shape in "${shapes[@]}"; do
    IFS='|' read -r hosts clusters senders segment <<<"$shape"
    for algo in leader matsuda; do
        segs=()
        c=0
        for n in $clusters; do
            [[ ${#segs[@]} -gt 0 ]] && segs+=(:)
            segs+=(-n "$n" -env HASHI_CLUSTER_ID "$c" "$work/bg" "$large")
            c=$((c + 1))
        done
        out=$(timeout 600 mpiexec -launcher exec -launcher-exec "env X={host}" -hosts "$hosts" \
            -genv HASHI_COLL_BCAST "$algo" -genv HASHI_COLL_ALLGATHER hier -genv HASHI_COLL_ALLGATHERV hier \
            -genv HASHI_COLL_BARRIER hier -genv HASHI_COLL_WAN_SENDERS "$senders" \
            -genv HASHI_COLL_SEGMENT "$segment" "${segs[@]}" 2>&1)
        status=$?
        if [[ $status -eq 0 ]] && grep -qx OK <<<"$out"; then
            echo "ok   clusters [$clusters] on $hosts, bcast $algo, $senders WAN senders, segment $segment"
        else
            failures=$((failures + 1))
            echo "FAIL clusters [$clusters] on $hosts, bcast $algo (exit $status):"
            head -20 <<<"$out" | sed 's/^/    /'
        fi
    done
done
echo "$failures failures"
[[ $failures -eq 0 ]]
