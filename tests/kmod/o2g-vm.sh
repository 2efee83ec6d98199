#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The o2g kernel module's tests, in a real kernel: builds kmod/ against
# Debian's 6.1 headers (plain Kbuild, and DKMS for the same kernel), builds
# the static test programs, packs them with busybox into an initramfs,
# boots Debian's own kernel under qemu (TCG: no KVM here), and runs
# tests/kmod/guest-init.sh there, which loads the module, runs every check
# and powers off. One boot for everything.
#
# Prints one PASS/FAIL line per check and "N passed, N failed"; exits
# non-zero if any check failed, if one expected check never reported, or if
# the guest's kernel log shows an oops, a BUG or a WARN.
#
#   tests/kmod/o2g-vm.sh            (make check runs it; root not needed
#                                    once scripts/install-deps has run)
# Environment: HASHI_KMOD_CACHE (default /var/cache/hashi/kmod: the guest
# kernel, and builds cached by source hash), HASHI_TEST_WORK (logs),
# O2G_VM_TIMEOUT (seconds, default 900: a safety net, not a measurement).
set -euo pipefail

top=${HASHI_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
here=$top/tests/kmod
cache=${HASHI_KMOD_CACHE:-/var/cache/hashi/kmod}
work=${HASHI_TEST_WORK:-${TMPDIR:-/tmp}}/kmod
rm -rf "$work"
mkdir -p "$work" "$cache"
t0=$(date +%s.%N)
lap() { awk -v a="$t0" -v b="$(date +%s.%N)" -v m="$*" 'BEGIN { printf "o2g-vm: [%5.1f s] %s\n", b - a, m }'; }
fail() { echo "o2g-vm: FAIL: $*" >&2; exit 1; }

for tool in qemu-system-x86_64 busybox cpio g++ make dpkg-deb apt-get depmod python3 dkms dpkg-buildpackage dh_dkms; do
    command -v "$tool" >/dev/null || fail "$tool is missing; run scripts/install-deps"
done
[[ -e /bin/busybox ]] && file -L /bin/busybox 2>/dev/null | grep -q 'statically linked' ||
    fail "/bin/busybox is not the static busybox; run scripts/install-deps (busybox-static)"

# 1. The guest kernel and the matching headers.
kroot=$("$here/guest-kernel.sh") || fail "no guest kernel (see above)"
kver=$(basename "$kroot")
kdir=/lib/modules/$kver/build
[[ -e $kdir/Makefile ]] || fail "no headers for $kver at $kdir; run scripts/install-deps"
lap "guest kernel $kver"

# 2. The module, cached by the hash of its sources and the kernel.
mod_dir=$("$here/module-build.sh" "$top" "$kver" "$cache") || fail "the module does not build against $kver"
mod_hash=${mod_dir##*/o2g-}
lap "module $mod_dir"
ko=$mod_dir/o2g.ko
modinfo -F vermagic "$ko" | grep -q "^$kver " || fail "o2g.ko's vermagic is not $kver"
# modinfo: the license, the version dkms.conf packages, every parameter.
want_version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/kmod/dkms.conf")
parms=$(modinfo -F parm "$ko" | cut -d: -f1 | sort | tr '\n' ' ')
if [[ $(modinfo -F license "$ko") == GPL && $(modinfo -F version "$ko") == "$want_version" &&
    $parms == "max_posted max_sockets max_unexpected_bytes max_unexpected_msgs pin_cache_bypass pin_cache_pages ring_entries " ]]; then
    echo "KMOD-CHECK modinfo-host PASS license GPL, version $want_version, parameters: $parms" >"$work/host-checks.txt"
else
    echo "KMOD-CHECK modinfo-host FAIL license '$(modinfo -F license "$ko")', version '$(modinfo -F version "$ko")' (dkms.conf: $want_version), parameters: $parms" >"$work/host-checks.txt"
fi

# 3. Static test programs, cached by the hash of their sources.
prog_sources=(tests/kmod/o2g_device.hpp tests/kmod/o2g_match_check.cpp tests/kmod/o2g_socket_check.cpp
    tests/kmod/o2g_fuzz.cpp kmod/include/uapi/o2g.h
    src/transport/match/match_backend.hpp src/transport/match/match_engine.cpp src/transport/match/match_engine.hpp
    src/transport/match/match_vectors.cpp src/transport/match/match_vectors.hpp
    src/transport/wire/frame.cpp src/transport/wire/frame.hpp src/transport/wire/byte_order.hpp
    src/transport/wire/handshake.cpp src/transport/wire/handshake.hpp src/transport/address.cpp src/transport/address.hpp)
prog_hash=$( (cd "$top" && sha256sum "${prog_sources[@]}"; g++ --version | head -1) | sha256sum | cut -c1-16)
prog_dir=$cache/build/progs-$prog_hash
if [[ ! -x $prog_dir/o2g-fuzz ]]; then
    rm -rf "$prog_dir.tmp"
    mkdir -p "$prog_dir.tmp"
    cxx=(g++ -std=c++20 -O2 -static -Wall -Wextra -Werror -I"$top/src" -I"$top/kmod/include")
    (
        cd "$top"
        "${cxx[@]}" -o "$prog_dir.tmp/o2g-match-check" tests/kmod/o2g_match_check.cpp \
            src/transport/match/match_vectors.cpp src/transport/match/match_engine.cpp
        "${cxx[@]}" -o "$prog_dir.tmp/o2g-socket-check" tests/kmod/o2g_socket_check.cpp \
            src/transport/wire/frame.cpp src/transport/wire/handshake.cpp src/transport/address.cpp
        "${cxx[@]}" -o "$prog_dir.tmp/o2g-fuzz" tests/kmod/o2g_fuzz.cpp
    ) >"$prog_dir.tmp/build.log" 2>&1 || { cat "$prog_dir.tmp/build.log" >&2; fail "the test programs do not build"; }
    rm -rf "$prog_dir"
    mv "$prog_dir.tmp" "$prog_dir"
    lap "test programs built"
else
    lap "test programs from the cache"
fi

# 4. Host checks that build or install something, run once per source
# hash: NAME, the cache directory, then the command, which gets a fresh
# directory as its last argument and prints its detail on its last line.
cached_check() {
    local name=$1 dir=$2
    shift 2
    if [[ -s $dir/check.log ]]; then
        echo "KMOD-CHECK $name PASS $(tail -1 "$dir/check.log") (cached by source hash)" >>"$work/host-checks.txt"
        lap "$name: from the cache"
        return
    fi
    rm -rf "$dir.tmp"
    mkdir -p "$dir.tmp"
    if "$@" "$dir.tmp" >"$dir.tmp/check.log" 2>&1; then
        echo "KMOD-CHECK $name PASS $(tail -1 "$dir.tmp/check.log")" >>"$work/host-checks.txt"
        rm -rf "$dir"
        mv "$dir.tmp" "$dir"
    else
        echo "KMOD-CHECK $name FAIL $(tail -1 "$dir.tmp/check.log")" >>"$work/host-checks.txt"
        cat "$dir.tmp/check.log" >&2
    fi
    lap "$name"
}
# DKMS: the same source as a DKMS tree, added, built and installed for
# $kver (not the host's running kernel) under a per-run version, then
# removed, so the host keeps no registration.
dkms_out=$cache/build/dkms-$mod_hash
cached_check dkms-add-build-install "$dkms_out" "$here/dkms-check.sh" "$top/kmod" "$kver"
# The Debian package (hashi-o2g-dkms): built, installed (DKMS builds and
# installs the module for $kver), purged.
cached_check dkms-deb "$cache/build/deb-$mod_hash" "$here/deb-check.sh" "$kver"

# 5. The initramfs: busybox, the module, the programs, the vectors, /init.
root=$work/initrd
mkdir -p "$root"/{bin,proc,sys,dev,tmp,run,etc}
cp /bin/busybox "$root/bin/"
cp "$ko" "$root/o2g.ko"
[[ -s $dkms_out/o2g.ko ]] && cp "$dkms_out/o2g.ko" "$root/o2g-dkms.ko"
cp "$prog_dir"/o2g-* "$root/bin/"
cp "$top/tests/unit/data/match-vectors.txt" "$root/match-vectors.txt"
cp "$here/guest-init.sh" "$root/init"
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1 >"$work/initrd.gz")
lap "initramfs $(du -h "$work/initrd.gz" | cut -f1)"

# 6. Boot. Two vCPUs (O2G_VM_CPUS): one is faster under TCG on a 2-core
# host, but pinning-beside-invalidations needs a thread that changes
# mappings while another pins, at the same time. The guest prints its
# checks on the serial console and powers off.
set +e
timeout "${O2G_VM_TIMEOUT:-900}" qemu-system-x86_64 -M q35 -accel tcg -cpu max -m 1024 -smp "${O2G_VM_CPUS:-2}" \
    -nographic -no-reboot -nodefaults -serial stdio -kernel "$kroot/vmlinux" -initrd "$work/initrd.gz" \
    -append "console=ttyS0 panic=-1 quiet nokaslr mitigations=off" </dev/null >"$work/guest.log" 2>&1
qemu_rc=$?
set -e
lap "VM done (qemu exit $qemu_rc, log $work/guest.log)"

# 7. The verdict.
cat "$work/host-checks.txt" >>"$work/checks.txt"
# shellcheck source=tests/kmod/vm-verdict.sh
source "$here/vm-verdict.sh"
set +e
# The checks the guest must report (a check that never ran is a failure).
vm_verdict o2g-vm "$work" "$qemu_rc" modinfo-host dkms-add-build-install dkms-deb insmod modinfo match-vectors-count \
    match-differential-tagged match-differential-untagged posted-then-arrived unexpected-then-posted truncation \
    untagged-engine ordering-wildcard backpressure pin-cache-hit bad-frame-stops-socket handoff-to-user-space \
    peer-close-event peer-reset-event munmap-while-arriving poll-and-eventfd many-peers memory-kinds \
    detach-gives-socket-back attach-refusals ring-posted-then-arrived ring-unexpected-then-posted \
    ring-then-ioctl-order ring-bad-entries rendezvous-in-order peek-and-claim large-receives-pin-little kill-9-mid-transfer kill-9-while-held-back ioctl-fuzz stream-transfer \
    rmmod-under-load rmmod-clean dkms-module-loads dmesg-clean
rc=$?
lap "done"
exit $rc
