#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds kmod/ as a DKMS package for a named kernel (not the running one)
# and copies the built module out:
#   tests/kmod/dkms-check.sh KMOD_DIR KVER OUT_DIR
# The source goes to /usr/src/hashi-o2g-<version> under a version unique
# to this run, and is removed (dkms remove, the tree) when done, so the
# host keeps no registration. Prints what dkms built on its last line.
set -euo pipefail
src=${1:?kmod dir}
kver=${2:?kernel version}
out=${3:?output dir}
[[ $(id -u) -eq 0 ]] || { echo "dkms-check: dkms add needs root (/usr/src, /var/lib/dkms)"; exit 1; }

base=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$src/dkms.conf")
version="$base.test$$"
tree=/usr/src/hashi-o2g-$version
cleanup() {
    dkms remove -m hashi-o2g -v "$version" --all >/dev/null 2>&1 || true
    rm -rf "$tree"
}
trap cleanup EXIT
rm -rf "$tree"
mkdir -p "$tree"
cp -r "$src/." "$tree/"
sed -i "s/^PACKAGE_VERSION=.*/PACKAGE_VERSION=\"$version\"/" "$tree/dkms.conf"
dkms add -m hashi-o2g -v "$version"
dkms build -m hashi-o2g -v "$version" -k "$kver"
ko=/var/lib/dkms/hashi-o2g/$version/$kver/x86_64/module/o2g.ko
[[ -s $ko ]] || ko=$ko.xz
[[ -s $ko ]] || { echo "dkms-check: dkms reported success but built no o2g.ko"; exit 1; }
mkdir -p "$out"
case $ko in *.xz) xz -dc "$ko" >"$out/o2g.ko" ;; *) cp "$ko" "$out/o2g.ko" ;; esac
dkms status -m hashi-o2g -v "$version" -k "$kver" | tail -1
echo "built $(modinfo -F version "$out/o2g.ko") for $(modinfo -F vermagic "$out/o2g.ko" | cut -d' ' -f1), license $(modinfo -F license "$out/o2g.ko"), $(modinfo -F parm "$out/o2g.ko" | wc -l) parameters"
