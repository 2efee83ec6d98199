#!/bin/busybox sh
# SPDX-License-Identifier: BSD-3-Clause
# /init of the provider's o2g VM (tests/kmod/o2g-provider-vm.sh packs it):
# loads virtio/9p and o2g, mounts the host's root read-only over 9p (the
# staged Hashi install, MPICH and their libraries, unchanged), chroots
# into it with fresh /proc, /sys, /dev, /tmp and /run, and runs
# tests/kmod/guest-provider-run.sh there on the programs of /progs. Any path ends in poweroff.
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
    hashi_bench=*) bench=${w#hashi_bench=} ;;
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
chroot /host /bin/bash "$srcdir/tests/kmod/guest-provider-run.sh" "$prefix" /tmp/progs "${bench:-0}"
echo "KMOD-END"
poweroff -f
