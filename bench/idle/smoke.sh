# SPDX-License-Identifier: BSD-3-Clause
# Smoke test of bench/idle/run-crowded: one quick round with more ranks
# than this machine has CPUs, the idle policy as it chooses and with a
# fixed spin.  It checks that every phase's data arrived right (crowded.c
# exits 1 on a wrong sum or block), that the job's census on this machine
# counted the ranks against the CPUs and chose the crowded spin, that a
# fixed spin took no census, and that no census file is left behind.
# Never a timing.
HASHI_TEST_WORK="${HASHI_TEST_WORK:-/tmp/hashi-test-work}/bench-idle"
source "$HASHI_SRCDIR/tests/integration/lib.sh"

cpus=$(nproc)
ranks=$((cpus * 2))
census_files() { find /dev/shm -maxdepth 1 -name 'hashi-census-*' -printf '%f\n' 2>/dev/null | sort; }
census_files >census.before

out="$work/out"
run quick -- env FI_HASHI_DEBUG=1 "$HASHI_SRCDIR/bench/idle/run-crowded" --prefix "$HASHI_PREFIX" --quick \
    --no-install --ranks "$ranks" --peers hashi,hashi+FI_HASHI_SPIN_US=50 --out "$out"
expect_status quick 0
for peer in hashi hashi+FI_HASHI_SPIN_US=50; do
    row=$(printf '%s' "$peer" | sed 's/[+]/[+]/g')
    expect_in "row-$peer" "$out/tables.txt" "^ *$row( +[0-9.e+-]+){6}$"
done
expect_in raw "$out/hashi.out" '^allreduce [0-9]+ [0-9.e+-]+ us$'
# More ranks than CPUs: some rank saw it (the count grows as ranks start).
expect_in crowded "$out/hashi.err" \
    "idle: [0-9]+ ranks of the job on this machine, $cpus CPUs: spin 5 us before giving the core away"
expect_count fixed-no-census "$out/hashi_FI_HASHI_SPIN_US_50.err" 'idle: [0-9]+ ranks of the job' 0
census_files >census.after
if comm -13 census.before census.after | grep -q .; then
    fail "census files left: $(comm -13 census.before census.after | tr '\n' ' ')"
else
    pass "no census file left in /dev/shm"
fi
# Bad arguments are usage errors, with the reason.
run bad -- "$HASHI_SRCDIR/bench/idle/run-crowded" --prefix "$HASHI_PREFIX" --peers hashi,nope --out "$work/bad"
expect_status bad 2
expect_in bad bad.err "unknown peer 'nope'"
finish
