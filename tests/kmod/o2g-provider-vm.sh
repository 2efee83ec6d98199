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
cache=${HASHI_KMOD_CACHE:-/var/cache/hashi/kmod}
work=${HASHI_TEST_WORK:-${TMPDIR:-/tmp}}/kmod-provider
rm -rf "$work"
mkdir -p "$work" "$cache"
fail() { echo "o2g-provider-vm: FAIL: $*" >&2; exit 1; }
for tool in qemu-system-x86_64 busybox cpio modprobe; do
    command -v "$tool" >/dev/null || fail "$tool is missing; run scripts/install-deps"
done

kroot=$("$here/guest-kernel.sh") || fail "no guest kernel (see above)"
kver=$(basename "$kroot")
mod_dir=$("$here/module-build.sh" "$top" "$kver" "$cache") || fail "the module does not build against $kver"

# The programs, compiled here, go in the initramfs (the guest's /tmp
# hides the host's); everything else of this host the guest reaches
# through the 9p share.
root=$work/initrd
mkdir -p "$root"/{bin,proc,sys,dev,tmp,modules,progs}
for src in examples/ring.c examples/pi.c examples/isort.c tests/kmod/probe_rendezvous.c; do
    ex=$(basename "$src" .c)
    "$HASHI_PREFIX/bin/mpicc" -O2 -o "$root/progs/$ex" "$top/$src" -lm >"$work/$ex.build.log" 2>&1 ||
        { cat "$work/$ex.build.log"; fail "compiling $src"; }
done
if [[ ${O2G_BENCH:-0} != 0 ]]; then
    "$top/bench/kmod/o2g-bench.sh" --prepare "$root/progs"
fi

# The initramfs: busybox, virtio + 9p (with their dependencies, in order), o2g, /init.
cp /bin/busybox "$root/bin/"
cp "$mod_dir/o2g.ko" "$root/o2g.ko"
for m in 9p 9pnet_virtio virtio_pci; do
    modprobe -d "$kroot" -S "$kver" --show-depends "$m"
done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' | while read -r ko; do
    cp "$ko" "$root/modules/"
    basename "$ko" >>"$root/modules/order"
done
cp "$here/guest-provider-init.sh" "$root/init"
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1 >"$work/initrd.gz")

set +e
timeout "${O2G_VM_TIMEOUT:-1200}" qemu-system-x86_64 -M q35 -accel tcg -cpu max -m "${O2G_VM_MEM:-2048}" -smp "${O2G_VM_CPUS:-1}" \
    -nographic -no-reboot -nodefaults -serial stdio -kernel "$kroot/vmlinux" -initrd "$work/initrd.gz" \
    -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
    -append "console=ttyS0 panic=-1 quiet nokaslr mitigations=off hashi_prefix=$HASHI_PREFIX hashi_srcdir=$top hashi_bench=${O2G_BENCH:-0}" \
    </dev/null >"$work/guest.log" 2>&1
qemu_rc=$?
set -e

# shellcheck source=tests/kmod/vm-verdict.sh
source "$here/vm-verdict.sh"
vm_verdict o2g-provider-vm "$work" "$qemu_rc" provider-ring provider-pi provider-isort provider-probe_rendezvous hashi-info-module \
    provider-bad-choice provider-kill-9
