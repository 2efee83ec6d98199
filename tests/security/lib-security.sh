# SPDX-License-Identifier: BSD-3-Clause
# Shared helpers of the security tests (source after tests/integration/lib.sh).

intruder="$HASHI_BUILDDIR/tests/security/hashi-intruder"
secprograms="$HASHI_SRCDIR/tests/security/programs"

# listening NAME: "ADDRESS:PORT" of every TCP socket that processes named
# NAME listen on, one per line.
listening() {
    local pids
    pids=$(pgrep -d'|' -x "$1") || return 0
    ss -ltnpH | grep -E "pid=($pids)," | awk '{print $4}' | sort -u
}

# wait_for FILE PATTERN SECONDS: until FILE has a line matching PATTERN.
wait_for() {
    local i
    for ((i = 0; i < $3 * 10; ++i)); do
        grep -Eq -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}
