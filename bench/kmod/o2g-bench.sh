#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# o2g against the user-space receive backend, in one VM boot (bench/kmod/
# README.md): hashi-p2p's 8-byte latency and message rate, bandwidth up to
# 1 MiB, system calls of the receiving rank per message (strace -c), and
# examples/isort, each with FI_HASHI_RECV=user and =kernel in the same
# guest, printed with the kernel/user ratio. The guest is qemu's TCG
# emulation: absolute figures mean nothing, only the ratios within the run.
#   bench/kmod/o2g-bench.sh              (HASHI_PREFIX: an installed or staged Hashi)
#   bench/kmod/o2g-bench.sh --prepare W  (o2g-provider-vm.sh: compile into W)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
: "${HASHI_PREFIX:?HASHI_PREFIX must point at an installed Hashi}"
if [[ ${1:-} == --prepare ]]; then
    "$HASHI_PREFIX/bin/mpicc" -O2 -o "$2/hashi-p2p" "$top"/bench/p2p/p2p_{main,latency,stream,exchange}.c
    exit 0
fi
export O2G_BENCH=${O2G_BENCH:-1} # quick: latency and message rate only
export HASHI_TEST_WORK=${HASHI_TEST_WORK:-${TMPDIR:-/tmp}/o2g-bench}
"$top/tests/kmod/o2g-provider-vm.sh" | grep -E '^o2g-provider-vm: |^BENCH |passed' || true
echo "(guest console: $HASHI_TEST_WORK/kmod-provider/guest.log)"
