# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# Booting the o2g VM that shares the host's root (o2g-provider-vm.sh,
# o2g-conformance-vm.sh); source, don't run. Debian's 6.1 kernel under
# qemu (TCG), a busybox initramfs with o2g.ko and the modules asked for,
# and the host's root read-only over 9p (tag hostroot), which the guest's
# /init chroots into (guest-provider-init.sh).
#   vm_setup LABEL TOP WORK       tools, guest kernel, o2g.ko; sets vm_kroot,
#                                 vm_kver, vm_mod_dir; makes the initramfs
#                                 tree vm_root (WORK/initrd; put programs in
#                                 vm_root/progs)
#   vm_pack INIT MODULE...        the initramfs: busybox, o2g.ko, the kernel
#                                 modules with their dependencies (insmod order
#                                 in /modules/order), INIT as /init
#   vm_boot TIMEOUT SMP MEM APPEND [QEMU_ARG...]
#                                 boots it, console to WORK/guest.log; sets
#                                 vm_qemu_rc (124: timed out)
vm_fail() { echo "$vm_label: FAIL: $*" >&2; exit 1; }

vm_setup() {
    vm_label=$1 vm_top=$2 vm_work=$3
    local tool cache=${HASHI_KMOD_CACHE:-/var/cache/hashi/kmod}
    mkdir -p "$cache"
    for tool in qemu-system-x86_64 busybox cpio modprobe; do
        command -v "$tool" >/dev/null || vm_fail "$tool is missing; run scripts/install-deps"
    done
    vm_kroot=$("$vm_top/tests/kmod/guest-kernel.sh") || vm_fail "no guest kernel (see above)"
    vm_kver=$(basename "$vm_kroot")
    vm_mod_dir=$("$vm_top/tests/kmod/module-build.sh" "$vm_top" "$vm_kver" "$cache") ||
        vm_fail "the module does not build against $vm_kver"
    # The guest's /tmp hides the host's, so programs compiled here for it
    # go in the initramfs (progs/); everything else of this host the guest
    # reaches through the 9p share.
    vm_root=$vm_work/initrd
    rm -rf "$vm_root"
    mkdir -p "$vm_root"/{bin,proc,sys,dev,tmp,modules,progs}
}

vm_pack() {
    local init=$1 ko
    shift
    cp /bin/busybox "$vm_root/bin/"
    cp "$vm_mod_dir/o2g.ko" "$vm_root/o2g.ko"
    # Each module after the ones it needs, each once.
    for m in "$@"; do
        modprobe -d "$vm_kroot" -S "$vm_kver" --show-depends "$m" || vm_fail "no kernel module $m in $vm_kver"
    done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' | while read -r ko; do
        cp "$ko" "$vm_root/modules/"
        basename "$ko" >>"$vm_root/modules/order"
    done
    cp "$init" "$vm_root/init"
    chmod +x "$vm_root/init"
    (cd "$vm_root" && find . | cpio -o -H newc --quiet | gzip -1 >"$vm_work/initrd.gz")
}

vm_boot() {
    local timeout=$1 smp=$2 mem=$3 append=$4
    shift 4
    set +e
    timeout "$timeout" qemu-system-x86_64 -M q35 -accel tcg -cpu max -m "$mem" -smp "$smp" \
        -nographic -no-reboot -nodefaults -serial stdio -kernel "$vm_kroot/vmlinux" -initrd "$vm_work/initrd.gz" \
        -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
        "$@" -append "console=ttyS0 panic=-1 quiet nokaslr mitigations=off $append" \
        </dev/null >"$vm_work/guest.log" 2>&1
    # shellcheck disable=SC2034 # the caller reads it
    vm_qemu_rc=$?
    set -e
}
