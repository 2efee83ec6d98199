#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A stranger on the network attacks a running job (4 ranks on this host,
# every message through the hashi provider): the old attack (learn the job
# id and the rank's address from a refusal, then inject a message as a
# made-up peer), today's handshake with a guessed key (a forged proof and a
# message injected after it), junk and silent connections, against every
# port the ranks listen on. Each must fail: the stranger receives not one
# byte, rank 0 receives exactly rank 3's three messages, the ranks log the
# refusals without repeating what the stranger claimed, and they listen only
# on the address they advertise.
source "$HASHI_SRCDIR/tests/integration/lib.sh"
source "$HASHI_SRCDIR/tests/security/lib-security.sh"

compile mpicc "$secprograms/inject_target.c" inject_target || { finish; exit 1; }
export MPIR_CVAR_NOLOCAL=1
flag="$work/attacked"
mpiexec -n 4 ./inject_target "$flag" >job.out 2>job.err </dev/null &
job=$!
if wait_for job.out '^ready' 60; then pass "the job is up"; else fail "the job did not start"; fi
mapfile -t socks < <(listening inject_target)
say "the ranks listen on: ${socks[*]}"
if [[ ${#socks[@]} -ge 4 ]]; then pass "found ${#socks[@]} listening sockets of the ranks"; else
    fail "found ${#socks[@]} listening sockets of the ranks, expected 4 or more"; fi
if printf '%s\n' "${socks[@]}" | grep -Eq '^(0\.0\.0\.0|\*|\[::\]):'; then
    fail "a rank listens on every address"; else pass "the ranks listen only on their own address"; fi
ip=${socks[0]%:*}
ports=()
for s in "${socks[@]}"; do ports+=("${s##*:}"); done
"$intruder" "$ip" "${ports[@]}" >intruder.out 2>intruder.err
sed 's/^/    intruder: /' intruder.out
touch "$flag"
wait $job
status=$?
expect_status job 0
expect_count job job.out "^rank 0 received from source 3 tag 7: 'GENUINE-[0-2]'$" 3
expect_in job job.out "^extra tag-7 messages waiting: 0$"
if grep -q INJECTED job.out; then fail "a stranger's message was received"; else pass "no stranger's message was received"; fi
if grep -Eq '^(LEAK|INJECTED|ANSWERED)' intruder.out; then fail "the intruder learned or injected something"; else
    pass "the intruder learned and injected nothing"; fi
expect_count intruder intruder.out "^port [0-9]+: 0 bytes received$" "${#ports[@]}"
expect_in job job.err "refused a connection from [0-9.]+:[0-9]+: "
if grep -q intruder job.err; then fail "the ranks' log repeats what the stranger claimed"; else
    pass "nothing the stranger claimed reached the log"; fi
say "the ranks wrote $(wc -l <job.err) lines of log under the attack"
if leftovers "inject_target $flag"; then fail "processes left behind"; else pass "no processes left behind"; fi
finish
