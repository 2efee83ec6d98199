# SPDX-License-Identifier: BSD-3-Clause
# The verdict of a VM test (o2g-vm.sh, o2g-provider-vm.sh); source, don't run.
#   vm_verdict LABEL WORK QEMU_RC EXPECTED_CHECK...
# Adds the guest's "KMOD-CHECK name PASS|FAIL detail" lines (and BENCH
# lines) from WORK/guest.log to WORK/checks.txt, fails every expected check
# that never reported, a console with a kernel error and a qemu that did
# not exit cleanly; prints the checks and "N passed, N failed"; returns
# non-zero if any failed.
vm_verdict() {
    local label=$1 work=$2 qemu_rc=$3 expected passed failed
    shift 3
    tr -d '\r' <"$work/guest.log" >"$work/guest.txt"
    grep '^KMOD-CHECK \|^BENCH ' "$work/guest.txt" >>"$work/checks.txt" || true
    for expected in "$@"; do
        grep -q "^KMOD-CHECK $expected " "$work/checks.txt" ||
            echo "KMOD-CHECK $expected FAIL never reported (the guest stopped early? see $work/guest.log)" >>"$work/checks.txt"
    done
    if grep -qE 'Kernel panic|BUG:|Oops|WARNING:|general protection' "$work/guest.txt"; then
        echo "KMOD-CHECK guest-console-clean FAIL the guest's console shows a kernel error (see $work/guest.log)" >>"$work/checks.txt"
    else
        echo "KMOD-CHECK guest-console-clean PASS" >>"$work/checks.txt"
    fi
    [[ $qemu_rc -eq 0 ]] || echo "KMOD-CHECK vm-exit FAIL qemu exited with $qemu_rc (124: timed out)" >>"$work/checks.txt"
    sed "s/^KMOD-CHECK /$label: /" "$work/checks.txt"
    passed=$(grep -c '^KMOD-CHECK .* PASS' "$work/checks.txt" || true)
    failed=$(grep -c '^KMOD-CHECK [^ ]* FAIL' "$work/checks.txt" || true)
    if [[ $failed -gt 0 ]]; then
        echo "$label: the guest's console ends with:"
        tail -n 30 "$work/guest.txt" | sed 's/^/    /'
    fi
    echo "$passed passed, $failed failed"
    [[ $failed -eq 0 ]]
}
