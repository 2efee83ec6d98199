#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# MPICH's own tests through the relays: a selection from the pt2pt, coll,
# rma and comm directories of MPICH's test suite, each test run as one job
# across two private clusters of the testbed's strict mode (no NAT: only
# the relays on the 2 gateways of each cluster carry anything between the
# clusters), started by hashi-grid-run through run-conformance --launcher.
# Every test must pass and no process may be left. The whole directories
# are run the same way by hand (tests/conformance/README.md, "Through
# relays"); this selection keeps make check short while covering what the
# relays carry differently: eager and rendezvous messages between clusters,
# wildcard receives and probes, the collectives over both clusters, RMA's
# active and passive targets, intercommunicators and communicators built
# across clusters.
source "$HASHI_SRCDIR/tests/integration/lib.sh"

if [[ $(id -u) -ne 0 ]]; then
    say "SKIP: needs root to create network namespaces (run make check as root)"
    exit 77
fi
tb="$HASHI_PREFIX/bin/hashi-testbed"
export HASHI_TESTBED_INSTANCE=rlyconf
cleanup() { "$tb" down >/dev/null 2>&1; }
trap cleanup EXIT

# The selection: every test's ranks are spread over both clusters (2 ranks:
# one in each; 4: two in each).
tests=(
    anyall rqstatus pt2pt_large isendrecv cancelanysrc # pt2pt
    iallred scantst allred2 icbcast                    # coll
    wintest rget_unlock lockopts acc_ordering transpose1 # rma
    dup ic1 cmsplit probe_intercomm                    # comm
)
dirs=pt2pt,coll,rma,comm

run up -- "$tb" up --clusters 2 --nodes 2 --gateways 2 --mode strict --wan-delay 1 --realtime
expect_status up 0
run suite -- "$HASHI_SRCDIR/tests/conformance/run-conformance" --dirs "$dirs" --budget 0 \
    --tests "$(
        IFS=,
        echo "${tests[*]}"
    )" \
    --launcher "$HASHI_PREFIX/bin/hashi-grid-run -i $HASHI_TESTBED_INSTANCE" \
    --results "$work/results.json"
expect_status suite 0
# run-conformance fails on a regression from its pass list; here every
# selected test must pass, so they are counted from its results as well.
python3 - "$work/results.json" "${#tests[@]}" >counts.out 2>&1 <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
res = doc["tests"]
ok = [r for r in res if r.get("status") == "pass"]
bad = [r for r in res if r.get("status") != "pass"]
print("ran %d, passed %d" % (len(res), len(ok)))
for r in bad:
    print("not passed: %s %s" % (r.get("id", r.get("name")), r.get("status")))
PY
cat counts.out | sed 's/^/    /'
expect_in counts counts.out "^ran ([0-9]+), passed \1$"
if grep -q "^ran 0," counts.out; then fail "counts: no test ran"; fi
# No process of the jobs is left once they ended.
leftover=$(pgrep -fa "impi-relay|impi-server|mpiexec -client" | grep -c "$HASHI_TESTBED_INSTANCE\|hashi-grid-run" || true)
if [[ $leftover -eq 0 ]]; then pass "no relay, server or mpiexec left"; else
    fail "$leftover processes left"
    pgrep -fa "impi-relay|impi-server|mpiexec -client" | sed 's/^/    /'
fi
finish
