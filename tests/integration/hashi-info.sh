# SPDX-License-Identifier: BSD-3-Clause
# hashi-info reports the versions the libraries themselves give.
source "$HASHI_SRCDIR/tests/integration/lib.sh"

run info -- hashi-info --all
expect_status info 0
expect_in info info.out "^Hashi MPI: +[0-9]+\.[0-9]+\.[0-9]+"
expect_in info info.out "^MPICH base: +4\.0\.2"
expect_in info info.out "^libfabric: +1\.1[7-9]|^libfabric: +[2-9]\."
expect_in info info.out "^Providers \(RDM\): .*sockets"
expect_in info info.out "^Providers \(RDM\): .*hashi"
expect_in info info.out "^MPICH base configure: .*--with-device=ch4:ofi"
expect_in info info.out "^Kernel module: "
run providers -- hashi-info --providers
expect_in providers providers.out "^tcp;ofi_rxm$"
run version -- hashi-info --version
expect_in version version.out "^[0-9]+\.[0-9]+\.[0-9]+$"
run bad -- hashi-info --bogus
expect_status bad 2
expect_in bad bad.err "unknown option '--bogus'"
finish
