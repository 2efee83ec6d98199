# SPDX-License-Identifier: BSD-3-Clause
# Shared helpers of the integration tests: they run real jobs with the
# installed (staged) Hashi found through HASHI_PREFIX. Source, don't run.
set -uo pipefail

: "${HASHI_PREFIX:?HASHI_PREFIX must point at an installed Hashi (make check sets it)}"
: "${HASHI_SRCDIR:?HASHI_SRCDIR must point at the source tree (make check sets it)}"
export PATH="$HASHI_PREFIX/bin:$PATH"
test_name=$(basename "$0" .sh)
work="${HASHI_TEST_WORK:-/tmp/hashi-test-work}/$test_name"
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 99
programs="$HASHI_SRCDIR/tests/integration/programs"
failures=0
checks=0

# In the ASan/UBSan build, the provider inside every rank is instrumented,
# so the ranks (ordinary MPI programs) get the ASan runtime preloaded. A
# wrapper ahead of the real mpiexec in PATH adds it, also for `env ... mpiexec`.
if [[ -n ${HASHI_ASAN_RUNTIME:-} ]]; then
    mkdir -p "$work/.asan-bin"
    cat >"$work/.asan-bin/mpiexec" <<WRAP
#!/bin/sh
exec "$HASHI_PREFIX/bin/mpiexec" -genv LD_PRELOAD "$HASHI_ASAN_RUNTIME" -genv ASAN_OPTIONS "detect_leaks=0:abort_on_error=1:handle_segv=0" "\$@"
WRAP
    chmod +x "$work/.asan-bin/mpiexec"
    ln -sf mpiexec "$work/.asan-bin/mpirun"
    export PATH="$work/.asan-bin:$PATH"
fi

say() { printf '%s: %s\n' "$test_name" "$*"; }
pass() { checks=$((checks + 1)); say "ok   $*"; }
fail() { checks=$((checks + 1)); failures=$((failures + 1)); say "FAIL $*"; }

# run NAME -- command...: runs it, keeping stdout in NAME.out, stderr in
# NAME.err and the exit status in $status.
run() {
    local name=$1
    shift 2
    "$@" >"$name.out" 2>"$name.err" </dev/null
    status=$?
    say "ran: $* (exit $status)"
}

expect_status() { # name expected
    if [[ $status -eq $2 ]]; then pass "$1: exit status $2"; else
        fail "$1: exit status $status, expected $2"; sed 's/^/    /' "$1.err" | head -20; fi
}

expect_in() { # name file pattern (grep -E)
    if grep -Eq -- "$3" "$2"; then pass "$1: $(basename "$2") matches /$3/"; else
        fail "$1: $(basename "$2") does not match /$3/"; sed 's/^/    /' "$2" | head -20; fi
}

expect_count() { # name file pattern count
    local n
    n=$(grep -Ec -- "$3" "$2")
    if [[ $n -eq $4 ]]; then pass "$1: $4 lines match /$3/"; else
        fail "$1: $n lines match /$3/, expected $4"; sed 's/^/    /' "$2" | head -20; fi
}

# compile CC SOURCE OUTPUT [flags]: builds with the installed wrapper.
compile() {
    local cc=$1 src=$2 out=$3
    shift 3
    if "$cc" -O2 -o "$out" "$src" "$@" >"$out.build.log" 2>&1; then
        pass "compiled $(basename "$src") with $cc"
    else
        fail "compiling $(basename "$src") with $cc"; sed 's/^/    /' "$out.build.log" | head -30
        return 1
    fi
}

# first_line FILE: FILE's first line once there is one (at most 5 s), as a
# server's printed address.
first_line() {
    local line=""
    for _ in $(seq 1 50); do
        line=$(head -1 "$1" 2>/dev/null)
        [[ -n $line ]] && break
        sleep 0.1
    done
    printf '%s' "$line"
}

# No process of a test may outlive it.
leftovers() { # pattern
    pgrep -f -- "$1" >/dev/null && return 0
    return 1
}

finish() {
    say "$checks checks, $failures failed"
    [[ $failures -eq 0 ]]
}
