#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Locks: lock-protected increments from every process sum exactly (two locks
# at once, with and without home migration; nested critical sections); lock
# misuse is reported; the C++ layer (scash.hpp) and the Fortran module
# (scash.f90) work.
. "$HASHI_SRCDIR/tests/scash/lib-scash.sh"

scash_compile "$scash_examples/counter.c" counter || { finish; exit; }
scash_compile "$scash_programs/lock_misuse.c" lock_misuse || { finish; exit; }
scash_compile "$scash_programs/nested_locks.c" nested_locks || { finish; exit; }
compile mpicxx "$scash_programs/cxx_layer.cpp" cxx_layer -lhashi-scash || { finish; exit; }
compile mpifort "$HASHI_PREFIX/include/scash.f90" fortran "$scash_programs/fortran.f90" -lhashi-scash || { finish; exit; }

scash_run counter -- ./counter 150
expect_status counter 0
expect_in counter counter.out '^counter: 600 \(expected 600\), second 300 \(expected 300\): ok'

scash_run counter-static SCASH_MIGRATION=0 -- ./counter 50
expect_status counter-static 0
expect_in counter-static counter-static.out '^counter: 200 \(expected 200\).*: ok'

scash_run nested -- ./nested_locks
expect_status nested 0
expect_in nested nested.out '^nested_locks: x0 240 y 240 x1 480 \(expected 240 240 480\): ok'

scash_run lock-misuse -- ./lock_misuse
expect_status lock-misuse 0
expect_in lock-misuse lock-misuse.err 'scash_unlock: lock 3 is not held by this process'
expect_in lock-misuse lock-misuse.err 'scash_lock: lock 1 is already held by this process'
expect_in lock-misuse lock-misuse.err 'scash_barrier: called while holding lock 1; unlock first'
expect_in lock-misuse lock-misuse.out '^lock_misuse: ok'

scash_run cxx-layer -- ./cxx_layer
expect_status cxx-layer 0
expect_in cxx-layer cxx-layer.out '^cxx_layer: sum 10 \(expected 10\): ok'

scash_run fortran -- ./fortran
expect_status fortran 0
expect_in fortran fortran.out '^fortran: counter 40: ok'

finish
