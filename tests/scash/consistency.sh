#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Barrier consistency: values written before a barrier are seen by all after
# it (block, cyclic and first-touch homes, with and without migration); two
# processes writing disjoint bytes of one page both survive; a
# false-sharing stress loop stays correct; a former home that writes a page
# after losing its home diffs against its copy, not against zeros.
. "$HASHI_SRCDIR/tests/scash/lib-scash.sh"

scash_compile "$scash_programs/visibility.c" visibility || { finish; exit; }
scash_compile "$scash_programs/disjoint.c" disjoint || { finish; exit; }
scash_compile "$scash_programs/pristine.c" pristine || { finish; exit; }

scash_run visibility -- ./visibility
expect_status visibility 0
expect_in visibility visibility.out '^visibility: ok \(0 wrong values\)'

scash_run visibility-static SCASH_MIGRATION=0 -- ./visibility
expect_status visibility-static 0
expect_in visibility-static visibility-static.out '^visibility: ok'

scash_run visibility-h1 SCASH_HYSTERESIS=1 -- ./visibility
expect_status visibility-h1 0
expect_in visibility-h1 visibility-h1.out '^visibility: ok'

scash_run disjoint -- ./disjoint
expect_status disjoint 0
expect_in disjoint disjoint.out '^disjoint: ok \(0 wrong bytes\)'

scash_run pristine -- ./pristine
expect_status pristine 0
expect_in pristine pristine.out '^pristine: ok \(0 wrong bytes\)'

finish
