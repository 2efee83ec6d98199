#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The examples: LU and Jacobi on SCASH equal a sequential run bit for bit
# (checked inside the programs by process 0), whatever the homes and the
# layout; with homes at the owners (placed by hand, or static block homes
# of the one-region layout) LU sends no diffs; dynamic homes send fewer
# diff bytes than static ones.
. "$HASHI_SRCDIR/tests/scash/lib-scash.sh"

scash_compile "$scash_examples/lu.c" lu || { finish; exit; }
scash_compile "$scash_examples/jacobi.c" jacobi || { finish; exit; }

for homes in "block -S" "cyclic -S" "hand -S" "block" "cyclic" "first -S" "block -S -l one" "cyclic -l one"; do
    name="lu-${homes// /}"
    scash_run "$name" -- ./lu -n 192 -b 16 -c -d $homes
    expect_status "$name" 0
    expect_in "$name" "$name.out" '^lu: check: bitwise equal to the sequential run'
done
expect_in lu-hand-S lu-hand-S.out 'diffs=0 diff_bytes=0 '
expect_in lu-block-S-lone lu-block-S-lone.out 'diffs=0 diff_bytes=0 '
expect_in lu-block lu-block.out 'diffs=0 diff_bytes=0 '

diff_bytes() { sed -n 's/.* diff_bytes=\([0-9]*\).*/\1/p' "$1"; }
static=$(diff_bytes lu-cyclic-S.out) dynamic=$(diff_bytes lu-cyclic.out)
if [[ -n $static && -n $dynamic && $dynamic -lt $static ]]; then
    pass "lu: dynamic homes send fewer diff bytes ($dynamic) than static cyclic ($static)"
else
    fail "lu: diff bytes dynamic '$dynamic', static cyclic '$static'"
fi

for homes in "block -S" "cyclic -S" "cyclic" "hand -S"; do
    name="jacobi-${homes// /}"
    scash_run "$name" -- ./jacobi -n 128 -i 20 -c -d $homes
    expect_status "$name" 0
    expect_in "$name" "$name.out" '^jacobi: check: bitwise equal to the sequential run'
done

finish
