# SPDX-License-Identifier: BSD-3-Clause
# hashi-info --stats DIR --watch on a running job: the ranks rewrite their
# statistics files while they run, and the watch shows their traffic (and
# rates) before the job has ended. The job waits for a file the test
# creates, so nothing here depends on how fast anything runs.
source "$HASHI_SRCDIR/tests/integration/lib.sh"

compile mpicc "$programs/stats_hold.c" stats_hold || { finish; exit; }
mkdir -p stats empty

# Usage errors first: said, and nothing watched.
run watch-alone -- hashi-info --watch
expect_status watch-alone 2
expect_in watch-alone watch-alone.err "go with --stats DIR"
run bad-interval -- hashi-info --stats stats --watch --interval soon
expect_status bad-interval 2
expect_in bad-interval bad-interval.err "option --interval 'soon' is not"
run no-dir -- hashi-info --stats "$work/nowhere" --watch
expect_status no-dir 1
expect_in no-dir no-dir.err "not a directory \(create it, then run the job with FI_HASHI_STATS_DIR="
# Before any rank wrote: it says it waits.
run waiting -- hashi-info --stats empty --watch --count 1
expect_status waiting 0
expect_in waiting waiting.out "^waiting for the ranks' statistics: "

# Two "hosts", so the traffic goes through the hashi provider.
FI_HASHI_STATS_DIR="$work/stats" mpiexec -hosts a,b -n 2 -launcher-exec "env X={host}" ./stats_hold "$work/release" \
    >job.out 2>job.err </dev/null &
job=$!
hashi-info --stats stats --watch --interval 0.2 >watch.out 2>watch.err </dev/null &
watcher=$!
# Until a refresh shows 100 messages sent to a peer (at most 60 s): in a
# table row (endpoint host.pid, peer number) the 5th column is tx msgs.
seen=0
for _ in $(seq 1 600); do
    if awk '$1 ~ /\.[0-9]+$/ && $2 ~ /^[0-9]+$/ && $5 ~ /^[0-9]+$/ && $5 + 0 >= 100 { found = 1 } END { exit !found }' \
        watch.out 2>/dev/null; then
        seen=1
        break
    fi
    kill -0 $job 2>/dev/null || break
    sleep 0.1
done
if kill -0 $job 2>/dev/null; then running=1; else running=0; fi
if [[ $seen -eq 1 && $running -eq 1 ]]; then
    pass "watch: the running job's 100 messages to a peer shown before it ended"
else
    fail "watch: seen=$seen while the job ran=$running"; sed 's/^/    /' watch.out job.err | tail -20
fi
touch release
wait $job
status=$?
expect_status job 0
expect_in job job.out "^stats_hold: 2 ranks released"
kill -INT $watcher
wait $watcher
status=$?
expect_status watch 0
refreshes=$(grep -c "^hashi-info --stats stats --watch: " watch.out)
if [[ $refreshes -ge 2 ]]; then pass "watch: refreshed ($refreshes times)"; else
    fail "watch: $refreshes refreshes"; fi
# From the second refresh on, each peer's rates since the last one.
expect_in watch watch.out "tx MiB/s +rx MiB/s"
expect_in watch watch.out "pace MiB/s +route$"
# The files at the end are whole and the summary reads them.
run summary -- hashi-info --stats stats
expect_status summary 0
expect_in summary summary.out "^total: 2 endpoints, "
if ls stats/*.tmp >/dev/null 2>&1; then fail "temporary statistics files left behind"; else
    pass "no temporary statistics file left"; fi
finish
