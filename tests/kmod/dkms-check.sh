#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# kmod/ as a DKMS package for a named kernel (not the running one): dkms
# add, build and install (into /lib/modules/KVER/updates/dkms, where
# modinfo -k KVER must then find it), and a copy of the built module:
#   tests/kmod/dkms-check.sh KMOD_DIR KVER OUT_DIR
# The source goes to /usr/src/hashi-o2g-<version> under a version unique
# to this run, and everything is removed again (dkms remove, the tree), so
# the host keeps no registration and no installed module. Prints what dkms
# built on its last line.
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
dkms install -m hashi-o2g -v "$version" -k "$kver"
installed=$(modinfo -k "$kver" -F filename o2g)
case $installed in
*/updates/dkms/o2g.ko*) echo "dkms-check: installed as $installed" ;;
*) echo "dkms-check: after dkms install, modinfo -k $kver finds '$installed'"; exit 1 ;;
esac
ko=/var/lib/dkms/hashi-o2g/$version/$kver/x86_64/module/o2g.ko
[[ -s $ko ]] || ko=$ko.xz
[[ -s $ko ]] || { echo "dkms-check: dkms reported success but built no o2g.ko"; exit 1; }
mkdir -p "$out"
case $ko in *.xz) xz -dc "$ko" >"$out/o2g.ko" ;; *) cp "$ko" "$out/o2g.ko" ;; esac
dkms status -m hashi-o2g -v "$version" -k "$kver" | tail -1
echo "added, built and installed $(modinfo -F version "$out/o2g.ko") for $(modinfo -F vermagic "$out/o2g.ko" | cut -d' ' -f1), license $(modinfo -F license "$out/o2g.ko"), $(modinfo -F parm "$out/o2g.ko" | wc -l) parameters"
