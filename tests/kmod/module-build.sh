#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds kmod/ against the guest kernel's headers (plain Kbuild, -Werror),
# cached by the hash of its sources and the kernel; prints the directory
# holding o2g.ko. Shared by the VM tests (o2g-vm.sh, o2g-provider-vm.sh).
#   tests/kmod/module-build.sh TOP KVER CACHE
set -euo pipefail
top=$1 kver=$2 cache=$3
kdir=/lib/modules/$kver/build
[[ -e $kdir/Makefile ]] || { echo "no headers for $kver at $kdir; run scripts/install-deps" >&2; exit 1; }
mod_hash=$( (cd "$top/kmod" && find . -type f \( -name '*.[ch]' -o -name Kbuild -o -name Makefile -o -name dkms.conf -o -name '*.sh' \) \
    -print0 | sort -z | xargs -0 sha256sum; echo "$kver") | sha256sum | cut -c1-16)
mod_dir=$cache/build/o2g-$mod_hash
if [[ ! -s $mod_dir/o2g.ko ]]; then
    rm -rf "$mod_dir.tmp"
    mkdir -p "$mod_dir.tmp"
    cp -r "$top/kmod/." "$mod_dir.tmp/src"
    # -Werror: a warning in the module is a defect here.
    if ! make -C "$kdir" M="$mod_dir.tmp/src" KCFLAGS=-Werror modules >"$mod_dir.tmp/build.log" 2>&1; then
        cat "$mod_dir.tmp/build.log" >&2
        echo "the module does not build against $kver" >&2
        exit 1
    fi
    cp "$mod_dir.tmp/src/o2g.ko" "$mod_dir.tmp/o2g.ko"
    rm -rf "$mod_dir"
    mv "$mod_dir.tmp" "$mod_dir"
fi
echo "$mod_dir"
