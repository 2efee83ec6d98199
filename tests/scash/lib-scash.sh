# SPDX-License-Identifier: BSD-3-Clause
# Helpers of the SCASH tests, on top of tests/integration/lib.sh. Source,
# don't run. Every job runs 4 processes on 2 emulated nodes and under a
# timeout, so a protocol bug shows as a failure, never as a hung test.
. "$HASHI_SRCDIR/tests/integration/lib.sh"

scash_programs="$HASHI_SRCDIR/tests/scash/programs"
scash_examples="$HASHI_SRCDIR/examples/scash"
# Generous: a job takes about a second; the limit only turns a hang into a failure.
SCASH_TIMEOUT=${SCASH_TIMEOUT:-60}

# scash_compile SOURCE OUTPUT: a C program linked with libhashi-scash.
scash_compile() {
    compile mpicc "$1" "$2" -lhashi-scash
}

# scash_run NAME [VAR=value ...] -- program args...: 4 processes, nodes a and b.
scash_run() {
    local name=$1
    shift
    local envs=()
    while [[ $1 != -- ]]; do envs+=("$1"); shift; done
    shift
    run "$name" -- timeout -k 5 "$SCASH_TIMEOUT" mpiexec -n 4 -hosts a:2,b:2 -launcher exec \
        -launcher-exec "env HASHI_NODE={host} ${envs[*]}" "$@"
}

# A job stopped by the timeout exits 124 (timeout's own code; 137 would be
# ambiguous with a rank killed by SIGKILL): name it as a hang.
expect_no_hang() {
    if [[ $status -eq 124 ]]; then fail "$1: hung (killed after ${SCASH_TIMEOUT} s)"; else
        pass "$1: finished without hanging"; fi
}
