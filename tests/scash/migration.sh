#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Dynamic home reallocation: a page written by one process other than its
# initial home moves there at the first barrier (after the hysteresis, 2
# intervals, with SCASH_FIRST_MOVE=0), after which its writer sends no
# diffs; later moves wait for the hysteresis, so alternating writers move
# nothing with hysteresis 2 (and ping-pong with 1); with SCASH_MIGRATION=0
# nothing moves; pages with two writers never move. Homes placed by the
# program (scash_set_home) keep the values and end the diffs.
. "$HASHI_SRCDIR/tests/scash/lib-scash.sh"

scash_compile "$scash_programs/migration.c" migration || { finish; exit; }
scash_compile "$scash_programs/disjoint.c" disjoint || { finish; exit; }
scash_compile "$scash_programs/placement.c" placement || { finish; exit; }

scash_run dynamic SCASH_STATS=1 -- ./migration
expect_status dynamic 0
expect_count dynamic dynamic.out '^single: round [0-3]: 16 of 16 pages at their writer' 4
expect_in dynamic dynamic.out '^single: diffs in rounds 2-3: 0$'
expect_count dynamic dynamic.out '^alternate: round [0-3]: 16 of 16 homes unmoved' 4
expect_in dynamic dynamic.err 'home_moves=16 '
expect_in dynamic dynamic.out '^migration: values ok'

scash_run first-move-waits SCASH_FIRST_MOVE=0 SCASH_STATS=1 -- ./migration
expect_status first-move-waits 0
expect_in first-move-waits first-move-waits.out '^single: round 0: 0 of 16 pages at their writer'
expect_in first-move-waits first-move-waits.out '^single: round 1: 16 of 16 pages at their writer'
expect_in first-move-waits first-move-waits.out '^single: diffs in rounds 2-3: 0$'
expect_count first-move-waits first-move-waits.out '^alternate: round [0-3]: 16 of 16 homes unmoved' 4
expect_in first-move-waits first-move-waits.err 'home_moves=16 '
expect_in first-move-waits first-move-waits.out '^migration: values ok'

scash_run hysteresis-1 SCASH_HYSTERESIS=1 -- ./migration
expect_status hysteresis-1 0
expect_in hysteresis-1 hysteresis-1.out '^single: round 0: 16 of 16 pages at their writer'
expect_count hysteresis-1 hysteresis-1.out '^alternate: round [0-3]: 0 of 16 homes unmoved' 4
expect_in hysteresis-1 hysteresis-1.out '^migration: values ok'

scash_run static SCASH_MIGRATION=0 SCASH_STATS=1 -- ./migration
expect_status static 0
expect_count static static.out '^single: round [0-3]: 0 of 16 pages at their writer' 4
expect_in static static.out '^single: diffs in rounds 2-3: 32$'
expect_in static static.err 'home_moves=0 '
expect_in static static.out '^migration: values ok'

scash_run multi-writer SCASH_STATS=1 -- ./disjoint
expect_status multi-writer 0
expect_in multi-writer multi-writer.err 'home_moves=0 '

scash_run placement -- ./placement
expect_status placement 0
expect_in placement placement.out '^placement: diffs after placing homes at the writers: 0$'
expect_in placement placement.out '^placement: ok'
expect_in placement placement.err 'scash_set_home: process 4 is not in 0..3'
expect_in placement placement.err 'scash_set_home: the address is not in a region from scash_alloc'
expect_in placement placement.err 'scash_set_home: the processes passed different ranges or processes'

finish
