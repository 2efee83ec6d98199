#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Correctness of libhashi-coll (issue 5): collcheck (tests/coll/collcheck.c)
# compares every collective we implement with MPICH's own and with the
# exact result, with each algorithm forced, on 1 to 16 ranks split unevenly
# over 1 to 4 fake clusters and fake nodes on this machine (mpiexec's MPMD
# segments set HASHI_CLUSTER_ID; -hosts makes MPICH see separate nodes, so
# traffic between them goes through the hashi provider).
#
# Every algorithm runs the full type/op matrix once on 5 ranks as 3+2
# (clusters of different sizes, one node with 2 ranks in each), on
# MPI_COMM_WORLD and on the "oneleft" split; the other layouts run the quick
# matrix on world and split communicators. The nonblocking forms (ibcast,
# ireduce, iallreduce, ibarrier) run the same cases as their blocking ones
# wherever `hier` is forced, completed by every MPI_Wait/Test form and
# across a blocking point-to-point call on some ranks. Then WAN sender caps
# of 1 and 2, a segment size that cuts pipelines into several segments,
# MPICH's own collectives through the interposer, and the automatic
# selection.
source "$HASHI_SRCDIR/tests/integration/lib.sh"

compile mpicc "$HASHI_SRCDIR/tests/coll/collcheck.c" collcheck -lm || { finish; exit; }

# Forced algorithms need no link parameters: skip the start-up probe.
export HASHI_COLL_PROBE=off
# A hang becomes a failure; a run takes seconds to a minute or two.
COLL_TIMEOUT=${COLL_TIMEOUT:-300}

# layout: clusters separated by '/', each a list of host:ranks; hosts are
# named by cluster (c1n0 is node 0 of cluster 1) so that no node spans two.
L1="c0n0:1"
L2="c0n0:1/c1n0:1"
L5="c0n0:2,c0n1:1/c1n0:2"
L7="c0n0:1/c1n0:2,c1n1:2/c2n0:1,c2n1:1"
L9="c0n0:2/c1n0:2,c1n1:1/c2n0:2,c2n1:2"
L12="c0n0:2,c0n1:1/c1n0:3/c2n0:1,c2n1:1,c2n2:1/c3n0:3"
L16="c0n0:3,c0n1:3,c0n2:2,c0n3:2/c1n0:3,c1n1:3"

# check NAME LAYOUT [VAR=value ...] -- collcheck options: one job, every
# collcheck case must pass.
check() {
    local name=$1 layout=$2
    shift 2
    local envs=()
    while [[ $1 != -- ]]; do envs+=("$1"); shift; done
    shift
    local hosts="" mpmd=() c=0 cl h n
    IFS=/ read -ra clusters <<<"$layout"
    for cl in "${clusters[@]}"; do
        n=0
        IFS=, read -ra hl <<<"$cl"
        for h in "${hl[@]}"; do n=$((n + ${h#*:})); done
        hosts+="${hosts:+,}$cl"
        ((${#mpmd[@]})) && mpmd+=(:)
        mpmd+=(-n "$n" -env HASHI_CLUSTER_ID "$c" ./collcheck "$@")
        c=$((c + 1))
    done
    local t0=$SECONDS
    run "$name" -- env "${envs[@]}" timeout -k 5 "$COLL_TIMEOUT" mpiexec -launcher exec \
        -launcher-exec "env HASHI_TEST_HOST={host}" -hosts "$hosts" "${mpmd[@]}"
    if [[ $status -eq 124 ]]; then
        fail "$name: hung (killed after $COLL_TIMEOUT s); rerun with --trace to see the case"
    fi
    expect_status "$name" 0
    if grep -Eq '^collcheck: [0-9]+ cases, 0 failed$' "$name.out"; then
        pass "$name: $(grep -E '^collcheck: [0-9]+ cases' "$name.out")"
    else
        fail "$name: $(grep -E '^collcheck: [0-9]+ cases' "$name.out" || echo 'no summary')"
        grep -E '^collcheck: FAIL' "$name.out" | head -10 | sed 's/^/    /'
        grep -Ev '^collcheck: (FAIL|NOTE)' "$name.out" "$name.err" | grep -Ev '^[^:]*:$' | head -10 | sed 's/^/    /'
    fi
    grep -E '^collcheck: [a-z_]+ \(algorithm' "$name.out" | sed "s/^/$test_name:      /"
    say "     $name took $((SECONDS - t0)) s"
}

allreduce_algs=(leader matsuda lr_lr lr_rab lr_lr_pipe ring)
bcast_algs=(leader matsuda)
hier=(HASHI_COLL_REDUCE=hier HASHI_COLL_REDUCE_SCATTER_BLOCK=hier HASHI_COLL_ALLGATHER=hier
    HASHI_COLL_ALLGATHERV=hier HASHI_COLL_ALLTOALL=hier HASHI_COLL_ALLTOALLV=hier HASHI_COLL_BARRIER=hier
    HASHI_COLL_IBCAST=hier HASHI_COLL_IREDUCE=hier HASHI_COLL_IALLREDUCE=hier HASHI_COLL_IBARRIER=hier)

## The full type/op matrix for every algorithm: 5 ranks as 3+2 ############
# The first run also splits off the communicator that leaves cluster 0 one
# rank; the quick runs below put every algorithm on split communicators.
check full-hier-leader "$L5" "${hier[@]}" HASHI_COLL_BCAST=leader HASHI_COLL_ALLREDUCE=leader -- \
    --comm world,oneleft
check full-matsuda "$L5" HASHI_COLL_BCAST=matsuda HASHI_COLL_ALLREDUCE=matsuda -- --coll bcast,allreduce --comm world
for alg in lr_lr lr_rab lr_lr_pipe ring; do
    check "full-$alg" "$L5" HASHI_COLL_ALLREDUCE=$alg -- --coll allreduce --comm world
done

## Quick matrix on every layout, algorithms rotating ######################
# Each layout runs every collective once (bcast and allreduce with the
# i-th algorithms), then bcast and allreduce again with others, so every
# algorithm meets several layouts.
i=0
for layout in "$L1" "$L2" "$L7" "$L9" "$L12" "$L16"; do
    P=$(tr ',/' '\n\n' <<<"$layout" | awk -F: '{n += $2} END {print n}')
    comms="world,evenodd,reverse,oneleft,shuffle,thirds"
    [[ $P -ge 12 ]] && comms="world,evenodd,oneleft"
    a1=${allreduce_algs[i % 6]} b1=${bcast_algs[i % 2]}
    a2=${allreduce_algs[(i + 3) % 6]} b2=${bcast_algs[(i + 1) % 2]}
    check "quick-$P-$a1" "$layout" "${hier[@]}" HASHI_COLL_BCAST=$b1 HASHI_COLL_ALLREDUCE=$a1 -- \
        --quick --comm "$comms"
    [[ $P -gt 1 ]] && check "quick-$P-$a2" "$layout" HASHI_COLL_BCAST=$b2 HASHI_COLL_ALLREDUCE=$a2 -- \
        --quick --coll bcast,allreduce --comm world,oneleft
    i=$((i + 1))
done

## Nonblocking forms: they must really run ours ##########################
# They use a communicator's hierarchy only once a blocking collective has
# built it (collcheck makes one first): the verbose report shows the
# forced algorithm ran on world and on split communicators.
check nonblocking-verbose "$L7" "${hier[@]}" HASHI_COLL_VERBOSE=1 -- --quick \
    --coll ibcast,ireduce,iallreduce,ibarrier --comm world,evenodd
for c in ibcast ireduce iallreduce ibarrier; do
    for size in 7 3 4; do
        if grep -Eq "^hashi-coll: $c on comm of $size ranks in [0-9]+ clusters, .*: hier \(forced" \
            nonblocking-verbose.err; then
            pass "nonblocking-verbose: $c ran hier on a communicator of $size ranks"
        else
            fail "nonblocking-verbose: no report of $c running hier on $size ranks (passed to MPICH?)"
        fi
    done
done

## WAN sender caps: 1 and 2 lanes per cluster pair (9 ranks, 3 clusters) ##
for k in 1 2; do
    for alg in matsuda lr_lr lr_rab; do
        check "senders-$k-$alg" "$L9" HASHI_COLL_WAN_SENDERS=$k "${hier[@]}" HASHI_COLL_BCAST=matsuda \
            HASHI_COLL_ALLREDUCE=$alg -- --quick --comm world,oneleft \
            --coll $([[ $alg == matsuda ]] && echo all || echo allreduce)
    done
done

## Pipelines of several segments: 4 KiB segments ##########################
for alg in lr_lr_pipe matsuda; do
    check "segments-$alg" "$L5" HASHI_COLL_SEGMENT=4096 HASHI_COLL_BCAST=matsuda HASHI_COLL_ALLREDUCE=$alg -- \
        --quick --coll bcast,allreduce --comm world,oneleft --large 20011
done
# The nonblocking ones become chains of segments in every cluster.
check segments-nonblocking "$L9" HASHI_COLL_SEGMENT=4096 "${hier[@]}" -- \
    --quick --coll ibcast,ireduce,iallreduce --comm world,oneleft,reverse --large 20011

## MPICH's own through the interposer, and the automatic choice ###########
# MPICH 4.0.2's MPI_Reduce is wrong (or crashes) when the root is not its
# node's first rank on nodes of different sizes (pmodels/mpich#6893),
# which every layout here has: HASHI_COLL=off leaves reduce out.
check mpich-off "$L5" HASHI_COLL=off -- --quick \
    --coll bcast,allreduce,allgather,allgatherv,alltoall,alltoallv,barrier,reduce_scatter_block,ibcast,iallreduce,ibarrier
check auto-9 "$L9" -- --quick --comm world,oneleft

## One node: alltoall by single copy (algorithms/alltoall_cma.cpp) #########
# Forced, it runs for every type and count (in place and non-contiguous
# types fall back to MPICH's on every rank together); unforced, a job of
# one cluster, where the library otherwise steps aside, runs it by itself
# for the large count's blocks (25000 ints or doubles per pair).
check cma-forced "c0n0:4" HASHI_COLL_ALLTOALL=cma -- --coll alltoall --comm world,evenodd,reverse,oneleft
check cma-auto "c0n0:4" HASHI_COLL_VERBOSE=1 -- --coll alltoall --comm world,reverse
expect_in cma-auto cma-auto.err '^hashi-coll: alltoall on comm of 4 ranks in 1 clusters, .*: cma \(one node'

finish
