# SPDX-License-Identifier: BSD-3-Clause
# Shared helpers of the integration tests: they run real jobs with the
# installed (staged) Hashi found through HASHI_PREFIX. Source, don't run.
set -uo pipefail

: "${HASHI_PREFIX:?HASHI_PREFIX must point at an installed Hashi (make check sets it)}"
: "${HASHI_SRCDIR:?HASHI_SRCDIR must point at the source tree (make check sets it)}"
export PATH="$HASHI_PREFIX/bin:$PATH"
test_name=$(basename "$0" .sh)
# A work directory per test, under its directory's name: two tests may have
# the same name in different directories (integration/ and wan/ have a
# federation.sh), and make check -jN runs them side by side.
work="${HASHI_TEST_WORK:-/tmp/hashi-test-work}/$(basename "$(dirname "$0")")/$test_name"
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

# start_private_sshd: a private sshd on a free port of 127.0.0.1 with keys
# made for this run (skips the test without sshd or root); sets $ssh_cmd to
# the ssh command that reaches it (for -launcher-exec) and stops the sshd
# when the test exits.
start_private_sshd() {
    if [[ ! -x /usr/sbin/sshd ]] || ! command -v ssh >/dev/null; then
        say "SKIP: sshd or ssh not installed (scripts/install-deps installs them)"
        exit 77
    fi
    if [[ $(id -u) -ne 0 ]]; then
        say "SKIP: needs root to run a private sshd that accepts this user's key"
        exit 77
    fi
    mkdir -p ssh && chmod 700 ssh
    ssh-keygen -q -t ed25519 -N '' -f ssh/host_key
    ssh-keygen -q -t ed25519 -N '' -f ssh/user_key
    cp ssh/user_key.pub ssh/authorized_keys
    local port
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    cat >ssh/sshd_config <<CONF
Port $port
ListenAddress 127.0.0.1
HostKey $work/ssh/host_key
AuthorizedKeysFile $work/ssh/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile $work/ssh/sshd.pid
AcceptEnv none
CONF
    mkdir -p /run/sshd
    /usr/sbin/sshd -f ssh/sshd_config -D -E "$work/ssh/sshd.log" &
    sshd_pid=$!
    trap 'kill $sshd_pid 2>/dev/null; wait $sshd_pid 2>/dev/null' EXIT
    ssh_cmd="ssh -p $port -i $work/ssh/user_key -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"
    for _ in $(seq 1 50); do
        $ssh_cmd 127.0.0.1 true 2>/dev/null && break
        sleep 0.1
    done
}

finish() {
    say "$checks checks, $failures failed"
    [[ $failures -eq 0 ]]
}
