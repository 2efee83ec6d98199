#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Builds hashi-o2g-dkms_<version>_all.deb, the o2g module's source packaged
# for DKMS (dh-dkms): installing it builds and installs o2g.ko for every
# kernel whose headers are installed, and for each kernel installed later.
#   kmod/make-deb.sh OUT_DIR
# The debian/ files are written here rather than kept in the tree, so that
# every file of the tree carries its license line (a changelog cannot).
# Needs debhelper and dh-dkms (scripts/install-deps).
set -euo pipefail
src=$(cd "$(dirname "$0")" && pwd)
out=$(realpath -m "${1:?usage: make-deb.sh OUT_DIR}")
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$src/dkms.conf")
[[ -n $version ]] || { echo "make-deb: no PACKAGE_VERSION in $src/dkms.conf" >&2; exit 1; }
maintainer="Hashi MPI <hashi-mpi@example.invalid>"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pkg=$tmp/hashi-o2g-$version
mkdir -p "$pkg/debian/source" "$pkg/module"
cp "$src"/Kbuild "$src"/Makefile "$src"/*.c "$src"/*.h "$pkg/module/"
cp -r "$src/include" "$pkg/module/"

cat >"$pkg/debian/control" <<CONTROL
Source: hashi-o2g
Section: kernel
Priority: optional
Maintainer: $maintainer
Build-Depends: debhelper-compat (= 13), dh-sequence-dkms
Standards-Version: 4.6.2
Rules-Requires-Root: no

Package: hashi-o2g-dkms
Architecture: all
Depends: \${misc:Depends}
Description: o2g: MPI receive matching in the TCP receive path (DKMS)
 The o2g kernel module of Hashi MPI: a process attaches its connected TCP
 sockets to /dev/o2g, and the kernel parses Hashi's frames, matches
 messages against the posted receives and copies payloads into pinned user
 buffers, reporting completions through a shared ring.
CONTROL

# A fixed date: the same source gives the same package.
cat >"$pkg/debian/changelog" <<CHANGELOG
hashi-o2g ($version-1) unstable; urgency=medium

  * Packaged from Hashi's kmod/ tree.

 -- $maintainer  Wed, 02 Dec 2026 12:00:00 +0000
CHANGELOG

cat >"$pkg/debian/copyright" <<COPYRIGHT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: hashi-o2g

Files: *
Copyright: Hashi MPI developers
License: GPL-2.0-only
 On Debian systems the full text is in /usr/share/common-licenses/GPL-2.
COPYRIGHT

echo "3.0 (native)" >"$pkg/debian/source/format"

# dh_dkms puts this file as /usr/src/hashi-o2g-VERSION/dkms.conf.
sed 's/^PACKAGE_VERSION=.*/PACKAGE_VERSION="#MODULE_VERSION#"/' "$src/dkms.conf" \
    >"$pkg/debian/hashi-o2g-dkms.dkms"

# Nothing to build here (dkms builds on the target): the empty overrides
# keep debhelper from running the module's Makefile against this machine's
# own kernel.
cat >"$pkg/debian/rules" <<RULES
#!/usr/bin/make -f
%:
	dh \$@

override_dh_auto_configure:
override_dh_auto_build:
override_dh_auto_test:
override_dh_auto_clean:
override_dh_auto_install:
	dh_install module/* usr/src/hashi-o2g-$version/

override_dh_dkms:
	dh_dkms -V $version
RULES
chmod +x "$pkg/debian/rules"

(cd "$pkg" && dpkg-buildpackage -us -uc -b) >"$tmp/build.log" 2>&1 || {
    cat "$tmp/build.log" >&2
    echo "make-deb: dpkg-buildpackage failed" >&2
    exit 1
}
mkdir -p "$out"
cp "$tmp"/hashi-o2g-dkms_"$version"-1_all.deb "$out/"
echo "$out/hashi-o2g-dkms_$version-1_all.deb"
