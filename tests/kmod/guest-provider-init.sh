#!/bin/busybox sh
# SPDX-License-Identifier: BSD-3-Clause
# /init of the VMs that share the host's root (tests/kmod/vm-boot.sh packs
# it for o2g-provider-vm.sh and o2g-conformance-vm.sh): loads the modules of
# /modules/order and o2g, mounts the host's root read-only over 9p (the
# staged Hashi install, MPICH and their libraries, unchanged), chroots into
# it with fresh /proc, /sys, /dev, /tmp and /run, and runs a script of the
# source tree there: RUN PREFIX WORK ARG. Kernel command line:
#   hashi_prefix=DIR hashi_srcdir=DIR   the staged install, the source tree
#   hashi_run=PATH    the script, relative to the source tree
#                     (default tests/kmod/guest-provider-run.sh)
#   hashi_share=DIR   a writable host directory (9p tag hostwork), mounted at
#                     the same path; it is then WORK, else WORK is /tmp/progs,
#                     the programs of the initramfs' /progs
#   hashi_arg=WORD    ARG (default 0)
# Any path ends in poweroff.
/bin/busybox --install -s /bin
export PATH=/bin
# The kernel's file systems, under a root (/, then the host's).
mount_kernel_fs() {
    for fs in proc:proc sysfs:sys devtmpfs:dev tmpfs:tmp; do
        mount -t "${fs%%:*}" none "$1/${fs#*:}"
    done
}
mount_kernel_fs ""
ip link set lo up
for m in $(cat /modules/order); do insmod "/modules/$m" || echo "KMOD-CHECK guest-modules FAIL insmod $m"; done
insmod /o2g.ko || { echo "KMOD-CHECK provider-insmod FAIL insmod /o2g.ko"; poweroff -f; }

# What the host passed on the kernel command line.
for w in $(cat /proc/cmdline); do
    case "$w" in
    hashi_prefix=*) prefix=${w#hashi_prefix=} ;;
    hashi_srcdir=*) srcdir=${w#hashi_srcdir=} ;;
    hashi_run=*) run=${w#hashi_run=} ;;
    hashi_share=*) share=${w#hashi_share=} ;;
    hashi_arg=*) arg=${w#hashi_arg=} ;;
    esac
done

mkdir -p /host
if ! mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000 hostroot /host; then
    echo "KMOD-CHECK host-share FAIL cannot mount the host's root over 9p"
    poweroff -f
fi
mount_kernel_fs /host
mkdir -p /host/dev/shm
mount -t tmpfs shm /host/dev/shm
mount -t tmpfs run /host/run
# The programs came in the initramfs (the host's /tmp is under the guest's).
cp -r /progs /host/tmp/progs
work=/tmp/progs
if [ -n "$share" ]; then
    # Over the share's path in the host's root (made in the guest's /tmp if
    # it is under /tmp); writes go to the host's directory.
    mkdir -p "/host$share" 2>/dev/null
    if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 hostwork "/host$share"; then
        echo "KMOD-CHECK host-share FAIL cannot mount the writable share at $share"
        poweroff -f
    fi
    work=$share
fi
chroot /host /bin/bash "$srcdir/${run:-tests/kmod/guest-provider-run.sh}" "$prefix" "$work" "${arg:-0}"
echo "KMOD-END"
poweroff -f
