# SPDX-License-Identifier: BSD-3-Clause
# Smoke test of bench/secure/run-secure that CI can afford: one quick run
# (a few seconds). Checks that every variant ran and that the table, the
# results and the CPU line are there. Never a timing: the machine is shared.
HASHI_TEST_WORK="${HASHI_TEST_WORK:-/tmp/hashi-test-work}/bench-secure"
source "$HASHI_SRCDIR/tests/integration/lib.sh"

out="$work/out"
run quick -- "$HASHI_SRCDIR/bench/secure/run-secure" --build-dir "$HASHI_BUILDDIR" --quick --no-install --out "$out"
expect_status quick 0
expect_in cpu quick.out '^== cpu: .*crypto flags: '
expect_in ktls quick.out '^== kernel .*TCP upper-layer protocols available: '
for v in plain integrity-gmac integrity-hmac tls-aes128-dhe tls-aes128-nodhe tls-chacha20-dhe tls-aes128-sockbio; do
    for m in bw_1KiB bw_16MiB cpu_64KiB lat_8B lat_4096B handshake; do
        expect_in "$v-$m" "$out/results.txt" "^result $v $m [0-9]+\.[0-9]+$"
    done
done
# Ratios to plain: plain's own are 1.00.
expect_in ratio "$out/results.txt" '^plain +[0-9.]+ \(1\.00\)'
finish
