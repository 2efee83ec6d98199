#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs in the provider's o2g VM, chrooted into the host's root
# (guest-provider-init.sh): MPI jobs on the staged Hashi with
# FI_HASHI_RECV=kernel, two processes MPICH takes for two nodes so every
# message goes through the provider, checked by their own output and by
# the module's counters; then a job killed with SIGKILL mid-transfer must
# leave the module with nothing (0 contexts, sockets, pinned pages).
#   guest-provider-run.sh PREFIX WORK BENCH   (WORK: host-compiled programs)
prefix=$1 work=$2 bench=$3
export PATH="$prefix/bin:/usr/sbin:/usr/bin:/sbin:/bin" HOME=/tmp
cd /tmp || exit 1
check() { echo "KMOD-CHECK $1 $2${3:+ $3}"; }
counter() { cat "/sys/class/misc/o2g/counters/$1" 2>/dev/null || echo missing; }
idle() { [[ $(counter contexts) == 0 && $(counter sockets) == 0 && $(counter pinned_pages) == 0 ]]; }
wait_idle() { local i; for ((i = 0; i < 3000; i++)); do idle && return 0; sleep 0.01; done; return 1; }
# Two "hosts" on this machine: PMI_process_mapping makes them two nodes.
job() { # backend, name, program args...
    local backend=$1 name=$2
    shift 2
    timeout 600 mpiexec -n 2 -launcher exec -launcher-exec "env HASHI_TEST_TEMPLATE_HOST={host}" -hosts n0,n1 \
        -genv FI_HASHI_RECV "$backend" "$@" >"$name.out" 2>&1
}

echo "KMOD-BEGIN provider, kernel $(uname -r), o2g $(cat /sys/module/o2g/version)"
# The eager limit stays at its default (32 KiB): isort's and
# probe_rendezvous's larger messages come by rendezvous, matched in the
# module too (counter rendezvous).
for ex in "ring 5:OK" "pi 200000:OK" "isort:VERIFICATION SUCCESSFUL" "probe_rendezvous:probe-rendezvous OK"; do
    prog=${ex%%:*} want=${ex#*:}
    name=${prog%% *}
    d0=$(counter delivered) h0=$(counter handoffs) p0=$(counter ring_posts) r0=$(counter rendezvous)
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086 # the program and its arguments
    # (MPICH posts a receive into a datatype of few blocks as one receive of
    # several buffers only when told to: probe_rendezvous checks that case.)
    job kernel "$name" -genv MPIR_CVAR_CH4_OFI_ENABLE_PT2PT_NOPACK 1 "$work/"$prog
    rc=$?
    t1=$(date +%s.%N)
    d=$(($(counter delivered) - d0)) h=$(($(counter handoffs) - h0)) p=$(($(counter ring_posts) - p0))
    r=$(($(counter rendezvous) - r0))
    # No rank may report an error either (a path the module refused, say);
    # the receives went through the posting ring; probe_rendezvous's large
    # messages were matched in the module.
    if [[ $rc == 0 ]] && grep -q "$want" "$name.out" && ! grep -q "error: " "$name.out" && [[ $d -gt 0 && $p -gt 0 ]] &&
        [[ $name != probe_rendezvous || $r -gt 0 ]] && wait_idle; then
        check "provider-$name" PASS "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f s", b-a}'), $d messages delivered by the module, $r rendezvous requests matched there, $p receives posted through its ring, $h frames handed to user space, module idle after"
    else
        check "provider-$name" FAIL "exit $rc, delivered $d, rendezvous $r, ring posts $p, handoffs $h, contexts $(counter contexts) sockets $(counter sockets) pinned $(counter pinned_pages): $(tail -5 "$name.out" | tr '\n' ' ')"
    fi
done

# hashi-info shows the module: its version, parameters and counters.
hashi-info >info.out 2>&1
delivered=$(counter delivered)
if grep -q "^Kernel module: *o2g loaded (version $(cat /sys/module/o2g/version)), /dev/o2g present" info.out &&
    grep -q "^  parameters: .*max_posted=$(cat /sys/module/o2g/parameters/max_posted)" info.out &&
    grep -q "^  counters: .*delivered=$delivered " info.out; then
    check hashi-info-module PASS "$(grep -A2 '^Kernel module' info.out | tr -s ' ' | tr '\n' ';' | cut -c1-300)"
else
    check hashi-info-module FAIL "$(grep -A2 '^Kernel module' info.out | tr '\n' ';')"
fi

# A refused choice is an error that says what to do, not a crash.
if job kernal bad-choice "$work/ring" 1; then
    check provider-bad-choice FAIL "FI_HASHI_RECV=kernal was accepted"
elif grep -q "user, kernel or auto" bad-choice.out; then
    check provider-bad-choice PASS "$(grep -o 'FI_HASHI_RECV=kernal[^:]*: use user, kernel or auto' bad-choice.out | head -1)"
else
    check provider-bad-choice FAIL "$(tail -3 bad-choice.out | tr '\n' ' ')"
fi

# A user's job on a node whose RLIMIT_MEMLOCK is Debian's 8 MiB (no
# CAP_IPC_LOCK: root's is dropped for the job): the module's pins count
# against it, and it is below what max_posted receives may hold. auto
# receives in user space and says why; kernel goes on, with a warning.
limited() { # KiB backend name program args...
    local kib=$1 backend=$2 name=$3
    shift 3
    (ulimit -l "$kib" && exec setpriv --inh-caps=-ipc_lock --bounding-set=-ipc_lock -- \
        timeout "${limited_timeout:-600}" mpiexec -n 2 -launcher exec -launcher-exec "env HASHI_TEST_TEMPLATE_HOST={host}" \
        -hosts n0,n1 -genv FI_HASHI_RECV "$backend" "$@") >"$name.out" 2>&1
}
d0=$(counter delivered)
limited 8192 auto memlock-auto "$work/ring" 5
rc=$? d=$(($(counter delivered) - d0))
if [[ $rc == 0 ]] && grep -q "OK" memlock-auto.out && [[ $d == 0 ]] &&
    grep -q "receiving in user space (FI_HASHI_RECV=auto): the o2g module pins receive buffers against RLIMIT_MEMLOCK" memlock-auto.out; then
    check provider-memlock-auto PASS "ring ran in user space (module delivered nothing): $(grep -o 'this process.s ([0-9]* KiB) is below the [0-9]* KiB' memlock-auto.out | head -1)"
else
    check provider-memlock-auto FAIL "exit $rc, module delivered $d: $(tail -3 memlock-auto.out | tr '\n' ' ')"
fi
d0=$(counter delivered)
limited 8192 kernel memlock-kernel "$work/ring" 5
rc=$? d=$(($(counter delivered) - d0))
if [[ $rc == 0 ]] && grep -q "OK" memlock-kernel.out && [[ $d -gt 0 ]] &&
    grep -q "warning: FI_HASHI_RECV=kernel: the o2g module pins receive buffers against RLIMIT_MEMLOCK" memlock-kernel.out &&
    wait_idle; then
    check provider-memlock-kernel PASS "ring ran through the module ($d messages) with the warning, module idle after"
else
    check provider-memlock-kernel FAIL "exit $rc, module delivered $d: $(tail -3 memlock-kernel.out | tr '\n' ' ')"
fi

# A receive the module refuses for the limit (64 KiB: isort's receives
# pin up to 1 MiB each) fails the job, naming ulimit -l, and does not hang.
t0=$(date +%s)
limited_timeout=120 limited 64 kernel memlock-refused "$work/isort"
rc=$? t=$(($(date +%s) - t0))
if [[ $rc != 0 && $rc != 124 ]] && grep -q "count against RLIMIT_MEMLOCK, 64 KiB for this process" memlock-refused.out &&
    wait_idle; then
    check provider-memlock-refused PASS "isort failed in $t s (exit $rc): $(grep -o 'o2g refused a receive of [0-9]* bytes[^(]*' memlock-refused.out | head -1)"
else
    check provider-memlock-refused FAIL "exit $rc after $t s: $(tail -4 memlock-refused.out | tr '\n' ' ')"
fi

# kill -9 of a rank while messages flow: nothing left in the module.
job kernel kill9 "$work/ring" 1000000 &
jobpid=$!
for ((i = 0; i < 3000; i++)); do
    [[ $(counter sockets) != 0 && $(counter sockets) != missing ]] && break
    sleep 0.01
done
sleep 0.5
victim=$(pgrep -f "^$work/ring 1000000" | head -1)
if [[ -n $victim ]]; then
    pinned_during=$(counter pinned_pages)
    kill -9 "$victim"
    wait "$jobpid"
    rc=$?
    if wait_idle; then
        check provider-kill-9 PASS "rank $victim killed with $pinned_during pages pinned; job ended (exit $rc); 0 contexts, 0 sockets, 0 pinned pages after"
    else
        check provider-kill-9 FAIL "contexts $(counter contexts) sockets $(counter sockets) pinned $(counter pinned_pages) after the kill"
    fi
else
    wait "$jobpid"
    check provider-kill-9 FAIL "no rank to kill (job exit $?): $(tail -3 kill9.out | tr '\n' ' ')"
fi

if [[ $bench != 0 ]]; then
    bash "$(dirname "$0")/../../bench/kmod/bench-guest.sh" "$work" "$bench"
fi
