# SPDX-License-Identifier: BSD-3-Clause
# The o2g kernel module (kmod/), tested in Debian's own kernel under qemu:
# one boot runs every check (tests/kmod/o2g-vm.sh says which). Needs root
# for the DKMS check and the packages of scripts/install-deps; the guest
# kernel and the builds are cached under /var/cache/hashi/kmod.
TESTS += tests/kmod/o2g-vm.sh
EXTRA_DIST += tests/kmod kmod
# The provider's o2g receive backend (FI_HASHI_RECV=kernel) with real MPI
# jobs, in a second boot that shares the host's root (the staged install).
TESTS += tests/kmod/o2g-provider-vm.sh
# MPICH's pt2pt selection with FI_HASHI_RECV=kernel, ranks in two network
# namespaces of the guest (tests/conformance/README.md, "In the o2g VM").
TESTS += tests/kmod/o2g-conformance-vm.sh
EXTRA_DIST += bench/kmod
