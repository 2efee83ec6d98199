#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs in the conformance o2g VM, chrooted into the host's root
# (guest-provider-init.sh, o2g-conformance-vm.sh): MPICH's test/mpi/pt2pt
# tests, built on the host in WORK (the writable share), run by
# tests/conformance/run-conformance against the staged Hashi with
# FI_HASHI_RECV=kernel. Every job's ranks alternate between two network
# namespaces, ns0 and ns1, joined by a veth pair, so that every message
# between two ranks goes through the provider over TCP (also between ranks
# in one namespace: run-conformance sets MPIR_CVAR_NOLOCAL=1). The results
# go to WORK/results.json for the host's verdict (o2g-conformance-vm.sh);
# here: whether the namespaces came up, the driver ran, the module
# delivered, and the module was idle and the kernel log clean after.
#   guest-conformance-run.sh PREFIX WORK ARG   (ARG unused; WORK/params
#   says what to run)
# No -e: a step that fails is reported as a check, and the checks after it
# still run (the host fails the test on any FAIL or missing check).
set -uo pipefail
prefix=$1 work=$2
# mpich_source, tests_from (a selection file, empty: the whole directory), lanes,
# timeout_multiplier, budget: written by the host.
# shellcheck source=/dev/null
source "$work/params" || { echo "KMOD-CHECK conformance-params FAIL cannot read $work/params"; exit 1; }
for v in mpich_source lanes timeout_multiplier budget; do
    [[ -n ${!v:-} ]] || { echo "KMOD-CHECK conformance-params FAIL $work/params sets no $v"; exit 1; }
done
srcdir=$(cd "$(dirname "$0")/../.." && pwd)
export PATH="$prefix/bin:/usr/sbin:/usr/bin:/sbin:/bin" HOME=/tmp USER=root
cd /tmp || exit 1
check() { echo "KMOD-CHECK $1 $2${3:+ $3}"; }
counter() { cat "/sys/class/misc/o2g/counters/$1" 2>/dev/null || echo missing; }
idle() { [[ $(counter contexts) == 0 && $(counter sockets) == 0 && $(counter pinned_pages) == 0 ]]; }
wait_idle() { local i; for ((i = 0; i < 3000; i++)); do idle && return 0; sleep 0.01; done; return 1; }

echo "KMOD-BEGIN conformance, kernel $(uname -r), o2g $(cat /sys/module/o2g/version), $(nproc) CPUs"

# Two network namespaces joined by a veth pair: each has one interface
# besides lo, which the provider takes as its address.
netns_up() {
    ip netns add ns0 && ip netns add ns1 &&
        ip link add veth0 netns ns0 type veth peer name veth1 netns ns1 &&
        ip -n ns0 addr add 10.77.0.1/24 dev veth0 && ip -n ns1 addr add 10.77.0.2/24 dev veth1 &&
        ip -n ns0 link set lo up && ip -n ns1 link set lo up &&
        ip -n ns0 link set veth0 up && ip -n ns1 link set veth1 up
}
if out=$(netns_up 2>&1) && ip netns exec ns1 ip -4 -o addr show veth1 | grep -q 'inet 10.77.0.2/24'; then
    check netns-veth PASS "ns0 10.77.0.1/24 (veth0) <-> ns1 10.77.0.2/24 (veth1)"
else
    check netns-veth FAIL "cannot set up the namespaces: $out"
    exit 1
fi

# What runs each test: mpiexec with the ranks alternating between the two
# namespaces (they inherit their PMI connection, so mpiexec itself stays
# here) and the kernel receive backend. run-conformance's guard adds
# -provider hashi and runtests -n N, the program and its arguments.
launcher=/tmp/netns-mpiexec
cat >"$launcher" <<EOF
#!/bin/sh
exec '$prefix/bin/mpiexec' -launcher exec -launcher-exec 'ip netns exec {host}' -hosts ns0,ns1 \\
    -genv FI_HASHI_RECV kernel "\$@"
EOF
chmod +x "$launcher"

# runtests skips an entry that needs more memory (mem=GB) than this guest has.
mem_gb=$(awk '/^MemTotal:/ { printf "%d", $2 / 1048576 }' /proc/meminfo)
d0=$(counter delivered) p0=$(counter ring_posts) h0=$(counter handoffs)
t0=$(date +%s)
# HASHI_CONFORMANCE_CACHE empty: the MPICH source is read-only here, keep
# nothing beside it. No pass list: the host judges from the results file
# (run-conformance exits 1 for a failed test, 2 when it could not run).
HASHI_PREFIX=$prefix HASHI_MPICH_SOURCE=${mpich_source:?} HASHI_CONFORMANCE_CACHE='' MPITEST_MEMORY_TOTAL=$mem_gb \
    python3 "$srcdir/tests/conformance/run-conformance" --dirs pt2pt ${tests_from:+--tests-from "$tests_from"} \
    --provider hashi --launcher "$launcher" --lanes "${lanes:?}" --jobs 1 --budget "${budget:?}" \
    --timeout-multiplier "${timeout_multiplier:?}" --workdir "$work/conformance" \
    --passlist "$work/no-passlist" --results "$work/results.json" 2>&1 | tee /tmp/conformance.out
rc=${PIPESTATUS[0]}
t1=$(date +%s)
d=$(($(counter delivered) - d0)) p=$(($(counter ring_posts) - p0)) h=$(($(counter handoffs) - h0))
if ! grep -q '^== reusing configured suite' /tmp/conformance.out; then
    # Configuring (and building) under TCG would take most of an hour.
    check conformance-run FAIL "run-conformance did not find the suite the host configured in $work/conformance (another configure key here?)"
elif [[ $rc == 0 || $rc == 1 ]] && [[ -s $work/results.json ]]; then
    check conformance-run PASS "run-conformance exit $rc in $((t1 - t0)) s"
else
    check conformance-run FAIL "run-conformance exit $rc after $((t1 - t0)) s, results file: $(ls "$work/results.json" 2>&1)"
fi
# The module, not the user backend, received the messages.
if [[ $d -gt 0 && $p -gt 0 ]]; then
    check conformance-module-delivered PASS "$d messages delivered by the module, $p receives posted through its ring, $h frames handed to user space"
else
    check conformance-module-delivered FAIL "delivered $d, ring posts $p, handoffs $h"
fi
if wait_idle; then
    check conformance-module-idle PASS "0 contexts, 0 sockets, 0 pinned pages after the tests"
else
    check conformance-module-idle FAIL "contexts $(counter contexts) sockets $(counter sockets) pinned $(counter pinned_pages) after the tests"
fi
# The console shows only errors (quiet): warnings are in the log.
if bad=$(dmesg | grep -E 'WARNING:|BUG:|Oops|general protection|Call Trace'); then
    check guest-dmesg-clean FAIL "$(head -5 <<<"$bad" | tr '\n' ' ')"
else
    check guest-dmesg-clean PASS
fi
