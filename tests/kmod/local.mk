# SPDX-License-Identifier: BSD-3-Clause
# The o2g kernel module (kmod/), tested in Debian's own kernel under qemu:
# one boot runs every check (tests/kmod/o2g-vm.sh says which). Needs root
# for the DKMS check and the packages of scripts/install-deps; the guest
# kernel and the builds are cached under /var/cache/hashi/kmod.
TESTS += tests/kmod/o2g-vm.sh
EXTRA_DIST += tests/kmod kmod
