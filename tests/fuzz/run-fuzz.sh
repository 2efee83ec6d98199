# SPDX-License-Identifier: BSD-3-Clause
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for a
# bounded time (HASHI_FUZZ_SECONDS, default 30) from the seed corpus kept in
# the repo. A crash fails the test and leaves the reproducer in the work dir.
set -uo pipefail
: "${HASHI_SRCDIR:?HASHI_SRCDIR must point at the source tree (make check sets it)}"
work="${HASHI_TEST_WORK:-/tmp/hashi-test-work}/fuzz"
seconds=${HASHI_FUZZ_SECONDS:-30}
if ! command -v clang++ >/dev/null; then
    echo "run-fuzz: SKIP: clang++ not installed (scripts/install-deps installs it)"
    exit 77
fi
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 99
src="$HASHI_SRCDIR/src"
status=0
# Each target is tests/fuzz/fuzz_<name>.cpp plus fuzz_<name>.sources, which
# lists the sources under test (paths relative to the top of the tree, one
# per line) and optionally a line "libs: ..." of extra link flags.
for harness in "$HASHI_SRCDIR"/tests/fuzz/fuzz_*.cpp; do
    target=$(basename "$harness" .cpp)
    target=${target#fuzz_}
    sources=()
    libs=()
    while read -r line; do
        [[ -z $line || $line == \#* ]] && continue
        if [[ $line == libs:* ]]; then read -ra libs <<<"${line#libs:}"; else sources+=("$HASHI_SRCDIR/$line"); fi
    done <"$HASHI_SRCDIR/tests/fuzz/fuzz_$target.sources"
    echo "run-fuzz: building fuzz_$target"
    if ! clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
        -I"$src" -I"$HASHI_SRCDIR" "$harness" "${sources[@]}" "${libs[@]}" -o "fuzz_$target"; then
        echo "run-fuzz: FAIL: fuzz_$target does not build"
        status=1
        continue
    fi
    mkdir -p "corpus_$target"
    cp "$HASHI_SRCDIR/tests/fuzz/corpus_$target"/* "corpus_$target/" 2>/dev/null
    echo "run-fuzz: running fuzz_$target for $seconds s"
    if "./fuzz_$target" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 "corpus_$target" \
        >"fuzz_$target.log" 2>&1; then
        grep -E '^stat::number_of_executed_units|^#[0-9]+ *DONE' "fuzz_$target.log" | tail -2
        echo "run-fuzz: ok fuzz_$target"
    else
        tail -40 "fuzz_$target.log"
        echo "run-fuzz: FAIL: fuzz_$target found a crash; reproducer: $(ls "$work"/crash-* 2>/dev/null | head -1)"
        status=1
    fi
done
exit $status
