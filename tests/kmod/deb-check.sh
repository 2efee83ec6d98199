#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The hashi-o2g-dkms package end to end on this machine: built by
# kmod/make-deb.sh, installed (its postinst has DKMS build and install
# o2g.ko for every kernel with headers, KVER among them), checked, purged:
#   tests/kmod/deb-check.sh KVER WORK_DIR
# Root. The package is purged again whatever happens; the dpkg lock is
# waited for (another apt may be running), not fought.
set -euo pipefail
kver=${1:?kernel version}
work=${2:?work dir}
top=$(cd "$(dirname "$0")/../.." && pwd)
[[ $(id -u) -eq 0 ]] || { echo "deb-check: installing a package needs root"; exit 1; }
apt_opts=(-y -q -o DPkg::Lock::Timeout=300)
export DEBIAN_FRONTEND=noninteractive

deb=$("$top/kmod/make-deb.sh" "$work")
version=$(dpkg-deb -f "$deb" Version)
contents=$(dpkg-deb -c "$deb")
for f in dkms.conf Kbuild o2g_sock.c include/uapi/o2g.h; do
    grep -q "usr/src/hashi-o2g-${version%-1}/$f\$" <<<"$contents" ||
        { echo "deb-check: $deb has no /usr/src/hashi-o2g-${version%-1}/$f"; exit 1; }
done
dpkg-deb -f "$deb" Depends | grep -q dkms || { echo "deb-check: the package does not depend on dkms"; exit 1; }

purge() { apt-get purge "${apt_opts[@]}" hashi-o2g-dkms >/dev/null 2>&1 || true; }
trap purge EXIT
apt-get install "${apt_opts[@]}" --no-install-recommends "$deb" >"$work/deb-install.log" 2>&1 ||
    { cat "$work/deb-install.log"; echo "deb-check: installing $deb failed"; exit 1; }
status=$(dkms status -m hashi-o2g -k "$kver")
grep -q ": installed" <<<"$status" || { echo "deb-check: after install, dkms status: '$status'"; exit 1; }
installed=$(modinfo -k "$kver" -F filename o2g)
purge
trap - EXIT
if dkms status -m hashi-o2g | grep -q . || [[ -e /usr/src/hashi-o2g-${version%-1} ]]; then
    echo "deb-check: purging left DKMS state behind: $(dkms status -m hashi-o2g)"
    exit 1
fi
echo "$(basename "$deb"): installed ($status; $installed), purged clean"
