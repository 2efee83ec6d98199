#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# MPICH's test/mpi/pt2pt with the provider's o2g receive backend
# (FI_HASHI_RECV=kernel) in a real kernel: configures and builds the tests
# here against the staged Hashi (tests/conformance/run-conformance
# --build-only, in this test's work directory), boots Debian's 6.1 kernel
# under qemu (TCG) with o2g.ko and the host's root shared read-only over 9p
# (tests/kmod/vm-boot.sh) and the work directory writable, and runs
# run-conformance there (tests/kmod/guest-conformance-run.sh): each job's
# ranks alternate between two network namespaces joined by a veth pair,
# every message through the provider. One boot.
#
# Prints one line per test (PASS, FAIL with the reason from its output,
# XFAIL for an entry of tests/kmod/conformance-xfail.txt, SKIP, NOT-RUN),
# the summary, the guest's checks (namespaces, the module delivered, idle
# after, clean kernel log) and how long it all took. Exits non-zero if a
# test outside the expected-failure list failed or a check failed.
#   tests/kmod/o2g-conformance-vm.sh   (make check; needs HASHI_PREFIX, HASHI_MPICH_SOURCE)
# Environment:
#   O2G_CONFORMANCE=ci (default): the tests tests/kmod/conformance-ci.txt
#     lists; full: the whole pt2pt directory (tests/conformance/README.md,
#     "In the o2g VM", says how long each takes); FILE: the tests FILE
#     lists (run-conformance --tests-from), e.g. the probe tests alone
#   O2G_CONFORMANCE_SMP (default 2), O2G_CONFORMANCE_LANES (default: the
#     guest's CPUs), O2G_CONFORMANCE_TIMEOUT_MULTIPLIER (default 2: the
#     tests' own limits are for real hardware, not TCG),
#     O2G_CONFORMANCE_BUDGET (seconds after which no new test starts; those
#     left are NOT-RUN and fail the test; default 0: none)
#   O2G_VM_TIMEOUT (seconds, default 1800 for ci, 14400 for full: a safety net)
#   HASHI_KMOD_CACHE, HASHI_TEST_WORK
set -euo pipefail
t_start=$(date +%s)
: "${HASHI_PREFIX:?HASHI_PREFIX must point at the staged Hashi install (make check sets it)}"
: "${HASHI_MPICH_SOURCE:?HASHI_MPICH_SOURCE must point at the unpacked MPICH 4.0.2 source (make check sets it)}"
top=${HASHI_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
here=$top/tests/kmod
label=o2g-conformance-vm
work=${HASHI_TEST_WORK:-${TMPDIR:-/tmp}}/kmod-conformance
fail() { echo "$label: FAIL: $*" >&2; exit 1; }

mode=${O2G_CONFORMANCE:-ci}
case $mode in
ci)
    selection=$here/conformance-ci.txt
    vm_timeout=${O2G_VM_TIMEOUT:-1800}
    ;;
full)
    selection=
    vm_timeout=${O2G_VM_TIMEOUT:-14400}
    ;;
*)
    [[ -r $mode ]] || fail "O2G_CONFORMANCE=$mode: use ci, full or a readable selection file"
    selection=$(realpath "$mode")
    vm_timeout=${O2G_VM_TIMEOUT:-14400}
    ;;
esac
smp=${O2G_CONFORMANCE_SMP:-2}
lanes=${O2G_CONFORMANCE_LANES:-$smp}
multiplier=${O2G_CONFORMANCE_TIMEOUT_MULTIPLIER:-2}
budget=${O2G_CONFORMANCE_BUDGET:-0}
xfail_list=$here/conformance-xfail.txt
[[ -r $xfail_list ]] || fail "no expected-failure list $xfail_list"

# The configured suite (conformance/) is kept from run to run: configuring
# it costs about 15 s, and run-conformance rebuilds its programs when the
# staged Hashi changed. Everything else is this run's.
mkdir -p "$work"
find "$work" -mindepth 1 -maxdepth 1 ! -name conformance -exec rm -rf {} +

# shellcheck source=tests/kmod/vm-boot.sh
source "$here/vm-boot.sh"
vm_setup "$label" "$top" "$work"

# The tests are configured and built here: the guest could, but under TCG
# that takes most of an hour.
t0=$(date +%s)
HASHI_CONFORMANCE_WORKDIR=$work/conformance "$top/tests/conformance/run-conformance" --dirs pt2pt \
    ${selection:+--tests-from "$selection"} --provider hashi --build-only >"$work/build.log" 2>&1 ||
    { tail -30 "$work/build.log"; fail "configuring or building MPICH's pt2pt tests (see $work/build.log)"; }
build_secs=$(($(date +%s) - t0))

# What the guest runs (guest-conformance-run.sh sources it).
{
    printf 'mpich_source=%q\n' "$HASHI_MPICH_SOURCE"
    printf 'tests_from=%q\n' "$selection"
    printf 'lanes=%q\n' "$lanes"
    printf 'timeout_multiplier=%q\n' "$multiplier"
    printf 'budget=%q\n' "$budget"
} >"$work/params"

# virtio + 9p for the shares, veth for the namespaces.
vm_pack "$here/guest-provider-init.sh" 9p 9pnet_virtio virtio_pci veth
t0=$(date +%s)
vm_boot "$vm_timeout" "$smp" 4096 \
    "hashi_prefix=$HASHI_PREFIX hashi_srcdir=$top hashi_share=$work hashi_run=tests/kmod/guest-conformance-run.sh" \
    -virtfs "local,path=$work,mount_tag=hostwork,security_model=none"
vm_secs=$(($(date +%s) - t0))

status=0 tests_verdict=passed
if [[ -s $work/results.json ]]; then
    python3 "$here/conformance-verdict.py" "$label" "$work/results.json" "$xfail_list" ||
        { status=1 tests_verdict="FAILED (a test outside $xfail_list failed or did not run)"; }
else
    echo "$label: no results from the guest ($work/results.json)"
    status=1 tests_verdict="FAILED (no results)"
fi
# shellcheck source=tests/kmod/vm-verdict.sh
source "$here/vm-verdict.sh"
vm_verdict "$label" "$work" "$vm_qemu_rc" netns-veth conformance-run conformance-module-delivered \
    conformance-module-idle guest-dmesg-clean || status=1
# The checks' count above is the VM's; the tests' verdict is this one.
echo "$label: the pt2pt tests: $tests_verdict"
mmss() { printf '%d:%02d' $(($1 / 60)) $(($1 % 60)); }
echo "$label: took $(mmss $(($(date +%s) - t_start))) in all (selection $mode, -smp $smp, $lanes lanes):" \
    "building the tests $(mmss "$build_secs"), VM boot to power-off $(mmss "$vm_secs")"
exit "$status"
