#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Dynamic home reallocation: a page written by one process other than its
# home moves there after the hysteresis (2 intervals by default, 1 with
# SCASH_HYSTERESIS=1), after which its writer sends no diffs; alternating
# writers move nothing with hysteresis 2 (and ping-pong with 1); with
# SCASH_MIGRATION=0 nothing moves; pages with two writers never move.
. "$HASHI_SRCDIR/tests/scash/lib-scash.sh"

scash_compile "$scash_programs/migration.c" migration || { finish; exit; }
scash_compile "$scash_programs/disjoint.c" disjoint || { finish; exit; }

scash_run dynamic SCASH_STATS=1 -- ./migration
expect_status dynamic 0
expect_in dynamic dynamic.out '^single: round 0: 0 of 16 pages at their writer'
expect_in dynamic dynamic.out '^single: round 1: 16 of 16 pages at their writer'
expect_in dynamic dynamic.out '^single: diffs in rounds 2-3: 0$'
expect_count dynamic dynamic.out '^alternate: round [0-3]: 16 of 16 homes unmoved' 4
expect_in dynamic dynamic.err 'home_moves=16 '
expect_in dynamic dynamic.out '^migration: values ok'

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

finish
