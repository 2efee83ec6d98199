# SPDX-License-Identifier: BSD-3-Clause
# mpiexec -bind-to / -map-by / -print-bindings: every rank reads its own
# CPU affinity with sched_getaffinity, and the test compares it with what
# was asked, worked out independently from the kernel's view of this
# machine (sysfs core siblings, the CPUs this test may use). Under the fork
# launcher mpiexec binds; under the exec launcher the binder mpiexec
# inserts on the rank's node does.
source "$HASHI_SRCDIR/tests/integration/lib.sh"

compile mpicc "$programs/affinity.c" affinity || { finish; exit; }

# "0-2,5" -> "0,1,2,5"
expand() {
    local out=() part
    IFS=, read -ra parts <<<"$1"
    for part in "${parts[@]}"; do
        if [[ $part == *-* ]]; then
            out+=($(seq "${part%-*}" "${part#*-}"))
        else
            out+=("$part")
        fi
    done
    local IFS=,
    echo "${out[*]}"
}
# The CPUs this test (and so mpiexec) may use, and this machine's cores
# among them as sysfs lists their hardware threads, in order.
allowed=$(expand "$(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status)")
IFS=, read -ra allowed_cpus <<<"$allowed"
cores=()
for cpu in "${allowed_cpus[@]}"; do
    siblings=()
    for s in $(expand "$(cat "/sys/devices/system/cpu/cpu$cpu/topology/thread_siblings_list")" | tr , ' '); do
        [[ ,$allowed, == *,$s,* ]] && siblings+=("$s")
    done
    core=$(IFS=,; echo "${siblings[*]}")
    [[ " ${cores[*]} " == *" $core "* ]] || cores+=("$core")
done
ncores=${#cores[@]}
say "this machine as the test sees it: cpus $allowed, $ncores cores (${cores[*]})"

# cpus_of NAME RANK: the CPUs rank RANK reported in NAME.out.
cpus_of() { sed -n "s/^affinity rank=$2 node=[^ ]* cpus=//p" "$1.out"; }
# reported_cpus NAME RANK: what -print-bindings said for RANK, expanded.
reported_cpus() { expand "$(sed -n "s/^mpiexec: rank $2 on [^ ]* bound to cpus \([0-9,-]*\) .*/\1/p" "$1.err")"; }

expect_cpus() { # name rank expected
    local got
    got=$(cpus_of "$1" "$2")
    if [[ $got == "$3" ]]; then pass "$1: rank $2 runs on cpus $3"; else
        fail "$1: rank $2 runs on cpus '$got', expected $3"; sed 's/^/    /' "$1.out" "$1.err" | head -20; fi
}
expect_reported() { # name rank: -print-bindings said what the rank found
    local said
    said=$(reported_cpus "$1" "$2")
    if [[ -n $said && $said == "$(cpus_of "$1" "$2")" ]]; then pass "$1: rank $2's binding reported as cpus $said"; else
        fail "$1: rank $2 reported as '$said', runs on '$(cpus_of "$1" "$2")'"; sed 's/^/    /' "$1.err" | head -20; fi
}

# Two ranks, one core each, in order: distinct cores when there are two.
run core -- mpiexec -bind-to core -print-bindings -n 2 ./affinity
expect_status core 0
expect_cpus core 0 "${cores[0]}"
expect_cpus core 1 "${cores[1 % ncores]}"
expect_reported core 0
expect_reported core 1
expect_in core core.err "^mpiexec: rank 1 on [^ ]+ bound to cpus [0-9,-]+ \(core [0-9]+; -bind-to core\)"
if ((ncores >= 2)); then
    if [[ $(cpus_of core 0) != "$(cpus_of core 1)" ]]; then pass "core: the two ranks have different cores"; else
        fail "core: both ranks on cpus $(cpus_of core 0)"; fi
fi

# No binding: every rank may run wherever mpiexec may.
run none -- mpiexec -bind-to none -print-bindings -n 2 ./affinity
expect_status none 0
expect_cpus none 0 "$allowed"
expect_cpus none 1 "$allowed"
expect_in none none.err "^mpiexec: rank 0 on [^ ]+ not bound, may run on cpus "

# More ranks than cores: as Hydra, local rank i gets binding i mod cores,
# so the extra ranks share the cores again in the same order (tests run 8
# ranks on 2 cores; refusing would make binding useless there).
n=$((2 * ncores))
run oversubscribed -- mpiexec -bind-to core -n "$n" ./affinity
expect_status oversubscribed 0
for ((r = 0; r < n; r++)); do
    expect_cpus oversubscribed "$r" "${cores[r % ncores]}"
done

# One hardware thread each; a user: list binds the ranks it names only.
run hwthread -- mpiexec -bind-to hwthread -n 2 ./affinity
expect_cpus hwthread 0 "${allowed_cpus[0]}"
expect_cpus hwthread 1 "${allowed_cpus[1 % ${#allowed_cpus[@]}]}"
last=${allowed_cpus[-1]}
run user -- mpiexec -bind-to "user:$last" -n 2 ./affinity
expect_status user 0
expect_cpus user 0 "$last"
expect_cpus user 1 "$allowed"

# Exec launcher, two nodes of two ranks: the binder on each node binds its
# own ranks from that node's topology, so both nodes start at core 0.
run exec -- mpiexec -launcher-exec "env HASHI_TEST_TEMPLATE_HOST={host}" -hosts alpha:2,beta:2 \
    -bind-to core -map-by core -print-bindings ./affinity
expect_status exec 0
for r in 0 1 2 3; do
    expect_cpus exec "$r" "${cores[(r % 2) % ncores]}"
    expect_reported exec "$r"
done
expect_in exec exec.err "^mpiexec: rank 2 on beta bound to cpus "

# -v says how each rank was bound too.
run verbose -- mpiexec -v -bind-to core -n 1 ./affinity
expect_status verbose 0
expect_in verbose verbose.err "^mpiexec: rank 0 on [^ ]+ bound to cpus ${cores[0]%%,*}"

# A bad spelling fails before anything starts, saying what is accepted.
run bad-spelling -- mpiexec -bind-to cores -n 1 touch started
expect_status bad-spelling 2
expect_in bad-spelling bad-spelling.err "-bind-to 'cores': unknown object 'cores'; choose one of core, hwthread, socket"
run bad-map -- mpiexec -bind-to core -map-by sockett -n 1 touch started
expect_status bad-map 2
expect_in bad-map bad-map.err "-map-by 'sockett'"
# A binding this node cannot satisfy, likewise (fork: checked before any start).
run unsatisfiable -- mpiexec -bind-to machine:2 -n 1 touch started
expect_status unsatisfiable 2
expect_in unsatisfiable unsatisfiable.err "cannot bind ranks on .*: -bind-to machine:2: asks for 2 machines per rank, this node has 1 machine"
if [[ ! -e started ]]; then pass "no process started for a bad binding"; else fail "a process ran despite a bad binding"; fi
# Under the exec launcher the rank's node finds out, and the job fails naming it.
run unsatisfiable-exec -- mpiexec -launcher-exec "env X={host}" -hosts alpha:1 -bind-to machine:2 ./affinity
if [[ $status -ne 0 ]]; then pass "unsatisfiable-exec: fails (exit $status)"; else fail "unsatisfiable-exec: exit 0"; fi
expect_in unsatisfiable-exec unsatisfiable-exec.err "cannot bind rank 0 on alpha: -bind-to machine:2: asks for 2 machines"
finish
