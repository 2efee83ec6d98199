# SPDX-License-Identifier: BSD-3-Clause
# Trust on mpiexec's side (issue 17). With real processes and sockets:
# - every rank gets HASHI_JOB_KEY (64 lowercase hex digits, the same for
#   every rank, fresh for every job) and never the IMPI secret;
# - under the ssh launcher, strangers that reach the PMI port before the
#   real ranks (one claiming pmiid=1 as MPICH's client would, one replaying
#   the shim's old line, a forged proof, junk, an over-long line, an idle
#   connection) get no byte, are closed (the idle one is left to its
#   deadline), are logged once, and the job completes with correct output;
# - no secret appears on any process's command line while the job runs.
source "$HASHI_SRCDIR/tests/integration/lib.sh"
here="$HASHI_SRCDIR/tests/security"

compile mpicc "$here/programs/key_wait.c" key_wait || { finish; exit 1; }
hex64='[0-9a-f]{64}'

# --- fork launcher: the key is in the environment, the IMPI secret is not
run fork-key -- env HASHI_IMPI_SECRET=not-for-the-ranks-0123456789 mpiexec -n 2 ./key_wait
expect_status fork-key 0
expect_count fork-key fork-key.out "^rank=[01] size=2 key=$hex64 impi_secret=<unset> " 2
expect_in fork-key fork-key.out "^keys agree$"
run fork-key-again -- mpiexec -n 1 ./key_wait
first=$(grep -Eo "key=$hex64" fork-key.out | head -1)
again=$(grep -Eo "key=$hex64" fork-key-again.out | head -1)
if [[ -n $first && -n $again && $first != "$again" ]]; then pass "two jobs get different keys"; else
    fail "two jobs got keys '$first' and '$again'"; fi

# --- ssh launcher with strangers on the PMI port first
start_private_sshd
# Holds every ssh back until the strangers are connected, so they are
# certainly first.
cat >slow-ssh <<SH
#!/bin/sh
for i in \$(seq 1 400); do [ -e "$work/ready" ] && break; sleep 0.05; done
exec $ssh_cmd "\$@"
SH
chmod +x slow-ssh
secret=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
# Given by name only, so that the value is on no command line unless
# mpiexec puts it there.
HASHI_IMPI_SECRET=$secret HASHI_TEST_SECRET=$secret mpiexec -launcher ssh -launcher-exec "$work/slow-ssh" \
    -hosts localhost:2,127.0.0.1:2 -n 4 -genvlist PATH,HASHI_TEST_SECRET,HASHI_IMPI_SECRET ./key_wait 2 \
    >hijack.out 2>hijack.err </dev/null &
mpx=$!
listen=
for _ in $(seq 1 200); do
    listen=$(ss -ltnpH 2>/dev/null | grep "pid=$mpx," | awk '{print $4}' | head -1)
    [[ -n $listen ]] && break
    sleep 0.05
done
if [[ -z $listen ]]; then
    fail "mpiexec (pid $mpx) never listened on a PMI port"
    kill $mpx 2>/dev/null
    touch ready done
    wait $mpx
    finish
    exit 1
fi
say "mpiexec's PMI port: $listen"
python3 "$here/stranger.py" "${listen%:*}" "${listen##*:}" "$work/ready" "$work/done" >strangers.out 2>strangers.err &
strangers=$!
# Command lines of every process while the ranks sleep.
for _ in $(seq 1 300); do
    [[ $(grep -c '^rank=' hijack.out) -ge 4 ]] && break
    kill -0 $mpx 2>/dev/null || break
    sleep 0.05
done
for i in 1 2 3; do
    ps -eo args >"ps.$i"
    sleep 0.2
done
wait $mpx
status=$?
touch done
wait $strangers
say "ran: mpiexec -launcher ssh ... key_wait 2 with strangers first (exit $status)"
expect_status hijack 0
expect_count hijack hijack.out "^rank=[0-3] size=4 key=$hex64 impi_secret=<unset> pmi_port=<unset> job=" 4
expect_in hijack hijack.out "^keys agree$"
for s in hijack lifeline forged junk long; do
    expect_in "stranger $s" strangers.out "^$s got=b'' closed=True$"
done
expect_in "stranger idle" strangers.out "^idle got=b'' closed=(True|False)$"
# Logged, but not once per stranger: a message at most every 5 s with a
# count of those it did not name. 5 strangers are refused at once, the idle
# one after 10 s if the job is still running then.
logged=$(grep -c "refused a connection to the PMI port from 127\.0\.0\.1:[0-9]\+" hijack.err)
counted=$(grep -Eo '\(([0-9]+) refused since the last message\)|refused ([0-9]+) more connections?' hijack.err |
    grep -Eo '[0-9]+' | awk '{ s += $1 } END { print s + 0 }')
named=$(grep -c "refused a connection to the PMI port" hijack.err)
with_count=$(grep -c "refused since the last message" hijack.err)
total=$((named - with_count + ${counted:-0}))
if [[ $logged -ge 1 && $logged -le 3 && ($total -eq 5 || $total -eq 6) ]]; then
    pass "hijack: $total refusals reported in $logged messages"
else
    fail "hijack: $total refusals reported in $logged messages, expected 5 or 6 in 1 to 3"
    sed 's/^/    /' hijack.err | head -10
fi
if [[ $(cat ps.1 ps.2 ps.3 | grep -c 'hashi-ssh-shim') -ge 4 ]]; then pass "ps saw the ranks' shims running"; else
    fail "ps did not see the ranks running; the command-line checks below prove nothing"; fi
# Anywhere: the test's secret, the job key the ranks printed, the names.
# On the job's own command lines also anything that looks like a token.
key=$(grep -Eo "key=$hex64" hijack.out | head -1)
key=${key#key=}
leaked=$( {
    cat ps.1 ps.2 ps.3 | grep -E -e "$secret" -e "${key:-no key printed}" -e 'HASHI_JOB_KEY=|HASHI_IMPI_SECRET='
    cat ps.1 ps.2 ps.3 | grep -F -e "$work" -e hashi-ssh-shim | grep -E "$hex64"
} | sort -u)
if [[ -z $leaked ]]; then pass "no secret on any command line"; else
    fail "secrets on command lines:"; sed 's/^/    /' <<<"$leaked" | head -10; fi
finish
