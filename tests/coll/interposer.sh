#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# C and Fortran programs built with Hashi's mpicc and mpifort run through
# libhashi-coll's algorithms, blocking and nonblocking: with HASHI_COLL_VERBOSE=1 the library says,
# on stderr, which algorithm each collective got, and the programs check
# their results. A plain program with nothing forced, across two clusters
# with WAN-like link parameters, gets a Hashi algorithm for a large
# allreduce and MPICH's for a non-commutative op.
source "$HASHI_SRCDIR/tests/integration/lib.sh"

src="$HASHI_SRCDIR/tests/coll"
compile mpicc "$src/collcheck.c" collcheck -lm || { finish; exit; }
compile mpifort "$src/fortran_coll.f90" fortran_coll || { finish; exit; }
compile mpicc "$src/auto_select.c" auto_select || { finish; exit; }
compile mpicc "$src/nonblocking.c" nonblocking || { finish; exit; }

COLL_TIMEOUT=${COLL_TIMEOUT:-300}
# 5 ranks: 3 in cluster 0 (two nodes), 2 in cluster 1.
two_clusters() { # [VAR=value ...] -- program args...
    local envs=()
    while [[ $1 != -- ]]; do envs+=("$1"); shift; done
    shift
    env "${envs[@]}" timeout -k 5 "$COLL_TIMEOUT" mpiexec -launcher exec -launcher-exec "env HASHI_TEST_HOST={host}" \
        -hosts c0n0:2,c0n1:1,c1n0:2 -n 3 -env HASHI_CLUSTER_ID 0 "$@" : -n 2 -env HASHI_CLUSTER_ID 1 "$@"
}
choice() { # collective algorithm: the verbose line of that choice (loosely)
    echo "^hashi-coll: $1 on comm of [0-9]+ ranks in [0-9]+ clusters, [0-9]+ bytes: $2 "
}
forced=(HASHI_COLL_PROBE=off HASHI_COLL_VERBOSE=1 HASHI_COLL_BCAST=matsuda HASHI_COLL_ALLREDUCE=lr_lr
    HASHI_COLL_REDUCE=hier HASHI_COLL_ALLGATHER=hier HASHI_COLL_ALLTOALL=hier
    HASHI_COLL_REDUCE_SCATTER_BLOCK=hier HASHI_COLL_BARRIER=hier HASHI_COLL_IALLREDUCE=hier HASHI_COLL_IBCAST=hier
    HASHI_COLL_IBARRIER=hier HASHI_COLL_IREDUCE=hier)

## C: collcheck, forced algorithms ########################################
run c-forced -- two_clusters "${forced[@]}" -- ./collcheck --quick --comm world \
    --coll bcast,allreduce,reduce,allgather,alltoall,barrier,reduce_scatter_block
expect_status c-forced 0
expect_in c-forced c-forced.out '^collcheck: [0-9]+ cases, 0 failed$'
for pair in "bcast matsuda" "allreduce lr_lr" "reduce hier" "allgather hier" "alltoall hier" "barrier hier" \
    "reduce_scatter_block hier"; do
    expect_in c-forced c-forced.err "$(choice $pair)"
done

## Fortran (use mpi): the same algorithms, and correct results ############
run fortran -- two_clusters "${forced[@]}" -- ./fortran_coll
expect_status fortran 0
expect_in fortran fortran.out '^fortran_coll: 5 ranks: OK'
for pair in "bcast matsuda" "allreduce lr_lr" "reduce hier" "allgather hier" "alltoall hier" "barrier hier" \
    "reduce_scatter_block hier" "iallreduce hier" "ibcast hier" "ibarrier hier"; do
    expect_in fortran fortran.err "$(choice $pair)"
done

## Nonblocking: many in flight, freed communicators, fresh ones ##########
run nonblocking -- two_clusters "${forced[@]}" -- ./nonblocking
expect_status nonblocking 0
expect_in nonblocking nonblocking.out '^nonblocking: 5 ranks, 0 wrong values: OK'
for pair in "iallreduce hier" "ibcast hier" "ibarrier hier" "ireduce hier"; do
    expect_in nonblocking nonblocking.err "$(choice $pair)"
done

## Nothing forced: the cost model chooses ##################################
# A WAN of 10 ms and 1 Gbit/s between clusters of 100 Mbit/s nodes: a
# large allreduce crosses it better with a Hashi algorithm than MPICH's.
cat >wan.params <<'EOF'
local_latency_us = 60
node_rate_mbit = 100
wan_latency_ms = 10
wan_flow_rate_mbit = 100
wan_rate_mbit = 1000
reduce_rate_mbyte = 2000
EOF
run auto -- two_clusters HASHI_COLL_VERBOSE=1 HASHI_COLL_PARAMS="$work/wan.params" -- ./auto_select
expect_status auto 0
expect_in auto auto.out '^auto_select: 5 ranks, 0 wrong values: OK'
expect_in auto auto.err "$(choice allreduce '(leader|matsuda|lr_lr|lr_rab|lr_lr_pipe|ring)')\(cost model"
expect_in auto auto.err "$(choice allreduce mpich)\(non-commutative"

## HASHI_COLL=off: nothing of ours runs, results still right ##############
run off -- two_clusters HASHI_COLL=off HASHI_COLL_VERBOSE=1 -- ./fortran_coll
expect_status off 0
expect_in off off.out '^fortran_coll: 5 ranks: OK'
expect_count off off.err '^hashi-coll: [a-z_]+ on comm' 0

finish
