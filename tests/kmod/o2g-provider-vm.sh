#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The provider's o2g receive backend (FI_HASHI_RECV=kernel) in a real
# kernel: builds kmod/ (tests/kmod/module-build.sh), compiles the examples
# with the staged mpicc, boots Debian's 6.1 kernel under qemu (TCG) with
# the host's root shared read-only over 9p, and runs
# tests/kmod/guest-provider-run.sh chrooted into it: the examples between
# two MPI "nodes" with the module delivering, and a rank killed with
# SIGKILL mid-transfer (then nothing left in the module). One boot.
#
# Prints one line per check and "N passed, N failed"; exits non-zero if a
# check failed or never reported, or if the guest's console shows a kernel
# error.
#   tests/kmod/o2g-provider-vm.sh     (make check; needs HASHI_PREFIX, the staged install)
# Environment: HASHI_KMOD_CACHE, HASHI_TEST_WORK, O2G_VM_TIMEOUT (seconds,
# default 1200: a safety net, not a measurement), O2G_BENCH=1, quick or
# profile (also run bench/kmod's guest part: see bench/kmod/o2g-bench.sh),
# O2G_VM_CPUS and O2G_VM_MEM (MiB) for the guest (default 1 and 2048: one
# vCPU runs the checks fastest under TCG on a 2-core host).
set -euo pipefail
: "${HASHI_PREFIX:?HASHI_PREFIX must point at the staged Hashi install (make check sets it)}"
top=${HASHI_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
here=$top/tests/kmod
work=${HASHI_TEST_WORK:-${TMPDIR:-/tmp}}/kmod-provider
rm -rf "$work"
mkdir -p "$work"
# shellcheck source=tests/kmod/vm-boot.sh
source "$here/vm-boot.sh"
vm_setup o2g-provider-vm "$top" "$work"

for src in examples/ring.c examples/pi.c examples/isort.c tests/kmod/probe_rendezvous.c; do
    ex=$(basename "$src" .c)
    "$HASHI_PREFIX/bin/mpicc" -O2 -o "$vm_root/progs/$ex" "$top/$src" -lm >"$work/$ex.build.log" 2>&1 ||
        { cat "$work/$ex.build.log"; vm_fail "compiling $src"; }
done
if [[ ${O2G_BENCH:-0} != 0 ]]; then
    "$top/bench/kmod/o2g-bench.sh" --prepare "$vm_root/progs"
fi

# virtio + 9p for the host's root.
vm_pack "$here/guest-provider-init.sh" 9p 9pnet_virtio virtio_pci
vm_boot "${O2G_VM_TIMEOUT:-1200}" "${O2G_VM_CPUS:-1}" "${O2G_VM_MEM:-2048}" \
    "hashi_prefix=$HASHI_PREFIX hashi_srcdir=$top hashi_arg=${O2G_BENCH:-0} ${O2G_VM_APPEND:-}"
qemu_rc=$vm_qemu_rc

# shellcheck source=tests/kmod/vm-verdict.sh
source "$here/vm-verdict.sh"
vm_verdict o2g-provider-vm "$work" "$qemu_rc" provider-ring provider-pi provider-isort provider-probe_rendezvous hashi-info-module \
    provider-bad-choice provider-memlock-auto provider-memlock-kernel provider-memlock-refused provider-kill-9
