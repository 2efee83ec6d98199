# SPDX-License-Identifier: BSD-3-Clause
# The examples, run as users would: 4 processes on one node (shared
# memory), then 4 processes MPICH treats as 4 nodes so every message goes
# through the libfabric provider, on each built-in provider we support.
source "$HASHI_SRCDIR/tests/integration/lib.sh"

ex="$HASHI_SRCDIR/examples"
compile mpicc "$ex/ring.c" ring
compile mpicc "$ex/pi.c" pi -lm
compile mpicc "$ex/isort.c" isort -lm
compile mpicc "$programs/mpiio.c" mpiio

check_examples() { # label, mpiexec options...
    local label=$1
    shift
    run "ring-$label" -- mpiexec "$@" ./ring 5
    expect_status "ring-$label" 0
    expect_in "ring-$label" "ring-$label.out" "OK"
    run "pi-$label" -- mpiexec "$@" ./pi 2000000
    expect_status "pi-$label" 0
    expect_in "pi-$label" "pi-$label.out" "OK"
    run "isort-$label" -- mpiexec "$@" ./isort
    expect_status "isort-$label" 0
    expect_in "isort-$label" "isort-$label.out" "VERIFICATION SUCCESSFUL"
}

check_examples node -n 4
# Four "hosts" that are all this machine: PMI_process_mapping makes them
# four nodes to MPICH, so no shared memory between them.
for provider in hashi sockets "tcp;ofi_rxm"; do
    tag=${provider//;/_}
    check_examples "$tag" -n 4 -provider "$provider" -launcher exec -launcher-exec "env HASHI_TEST_TEMPLATE_HOST={host}" -hosts n0,n1,n2,n3
done
# The same over protected streams (src/transport/secure), which otherwise
# only connections between clusters get: every byte between the ranks in
# integrity records, then in TLS 1.3.
for level in integrity encryption; do
    check_examples "hashi-$level" -n 4 -genv FI_HASHI_PROTECT_LOCAL 1 -genv FI_HASHI_WAN_PROTECTION "$level" \
        -genv FI_HASHI_DEBUG 1 -launcher exec -launcher-exec "env HASHI_TEST_TEMPLATE_HOST={host}" -hosts n0,n1,n2,n3
    expect_in "isort-hashi-$level" "isort-hashi-$level.err" "protected: $level"
done
run isort-3 -- mpiexec -n 3 ./isort
expect_in isort-3 isort-3.out "VERIFICATION SUCCESSFUL"
# MPI-IO through ROMIO, on one node and on four.
run mpiio -- mpiexec -n 4 ./mpiio "$work/io-node.dat"
expect_in mpiio mpiio.out "file size 65536 bytes, 0 wrong values: OK"
run mpiio-nodes -- mpiexec -n 4 -launcher-exec "env X={host}" -hosts a,b,c,d ./mpiio "$work/io-nodes.dat"
expect_in mpiio-nodes mpiio-nodes.out "file size 65536 bytes, 0 wrong values: OK"
run ring-1 -- mpiexec -n 1 ./ring
expect_in ring-1 ring-1.out "OK"
finish
