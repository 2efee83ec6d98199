#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Prints the directory of a bootable Debian kernel for the o2g VM tests,
# fetching it into a cache first if needed:
#   tests/kmod/guest-kernel.sh [KVER]
# KVER defaults to the ABI of the installed linux-headers-amd64 (the headers
# the module is built against must be those of the kernel that boots). The
# image .deb is fetched with `apt-get download` and unpacked with dpkg-deb
# -x into $HASHI_KMOD_CACHE/KVER (default /var/cache/hashi/kmod): it is
# never installed, so the host's boot setup and initramfs hooks stay
# untouched. The directory then holds lib/modules/KVER (with depmod's maps)
# and vmlinux, the uncompressed kernel that qemu boots directly (PVH entry):
# no decompression inside the emulated guest.
set -euo pipefail

cache=${HASHI_KMOD_CACHE:-/var/cache/hashi/kmod}

headers_kver() {
    # linux-headers-amd64 depends on linux-headers-<KVER> (= version).
    dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null |
        grep -o 'linux-headers-[0-9][^ ,]*-amd64' | head -1 | sed 's/^linux-headers-//'
}

kver=${1:-$(headers_kver)}
if [[ -z $kver ]]; then
    echo "guest-kernel: linux-headers-amd64 is not installed; run scripts/install-deps" >&2
    exit 1
fi
dir=$cache/$kver
if [[ -s $dir/vmlinux && -d $dir/lib/modules/$kver ]]; then
    echo "$dir"
    exit 0
fi

mkdir -p "$cache"
exec 9>"$cache/.lock-$kver"
flock 9
if [[ ! -s $dir/vmlinux ]]; then
    tmp=$(mktemp -d "$cache/.fetch-$kver.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    # -unsigned is the same kernel without the Secure Boot signature.
    if ! (cd "$tmp" && { apt-get download -q "linux-image-$kver-unsigned" || apt-get download -q "linux-image-$kver"; }) >"$tmp/apt.log" 2>&1; then
        cat "$tmp/apt.log" >&2
        echo "guest-kernel: cannot download linux-image-$kver; after a Debian point release run 'apt-get update' and scripts/install-deps so the headers and the image agree" >&2
        exit 1
    fi
    mkdir -p "$tmp/root"
    dpkg-deb -x "$tmp"/linux-image-*.deb "$tmp/root"
    depmod -b "$tmp/root" "$kver"
    python3 - "$tmp/root/boot/vmlinuz-$kver" "$tmp/root/vmlinux" <<'PY'
import lzma, sys
data = open(sys.argv[1], 'rb').read()
start = data.find(b'\xfd7zXZ\x00')
if start < 0:
    sys.exit('guest-kernel: no xz stream in ' + sys.argv[1])
open(sys.argv[2], 'wb').write(lzma.LZMADecompressor().decompress(data[start:]))
PY
    rm -rf "$dir"
    mv "$tmp/root" "$dir"
fi
echo "$dir"
