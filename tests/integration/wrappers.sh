# SPDX-License-Identifier: BSD-3-Clause
# The compiler wrappers: -show output, compile-only mode, and hello in all
# four languages compiled and run with mpiexec -n 4.
source "$HASHI_SRCDIR/tests/integration/lib.sh"

run show-cc -- mpicc -show
expect_status show-cc 0
expect_in show-cc show-cc.out "^gcc -I$HASHI_PREFIX/include -L$HASHI_PREFIX/lib .*-lmpi\$"
# Legacy Fortran as Debian's mpif90.mpich builds it: gfortran 10 and later
# get -fallow-argument-mismatch -fallow-invalid-boz, decided from the
# compiler's own version.
legacy_flags=""
if (($(gfortran -dumpversion | cut -d. -f1) >= 10)); then
    legacy_flags=" -fallow-argument-mismatch -fallow-invalid-boz"
fi
run show-fort -- mpifort -show
expect_status show-fort 0
expect_in show-fort show-fort.out "^gfortran$legacy_flags -I$HASHI_PREFIX/include .*-lmpifort -lmpi\$"
run show-f77 -- mpif77 -show -c x.f
expect_in show-f77 show-f77.out "^gfortran$legacy_flags -c x.f -I$HASHI_PREFIX/include\$"
run show-compile -- mpicc -show -c x.c
expect_in show-compile show-compile.out "^gcc -c x.c -I$HASHI_PREFIX/include\$"
run show-cxx -- mpicxx -show x.cxx
expect_in show-cxx show-cxx.out "^g\+\+ x.cxx .*-lmpicxx -lmpi\$"
for alias in mpif90 mpic++; do
    run "show-$alias" -- "$alias" -show
    expect_status "show-$alias" 0
done
run no-args -- mpicc
expect_status no-args 2
expect_in no-args no-args.err "no input files"
run bad-compiler -- env HASHI_CC=/nonexistent/cc mpicc x.c
expect_status bad-compiler 127
expect_in bad-compiler bad-compiler.err "cannot run the compiler '/nonexistent/cc'"

ex="$HASHI_SRCDIR/examples"
compile mpicc "$ex/hello.c" hello_c
compile mpicxx "$ex/hello.cxx" hello_cxx
compile mpif77 "$ex/hello_f77.f" hello_f77
compile mpif90 "$ex/hello_f90.f90" hello_f90
# An NPB-style F77 routine (BOZ constants in DATA, one routine called with
# buffers of different types): gfortran alone rejects it, the wrappers
# build it, and it runs.
legacy="$programs/legacy_random.f"
if [[ -n $legacy_flags ]]; then
    run legacy-plain -- gfortran -fsyntax-only -I"$HASHI_PREFIX/include" "$legacy"
    expect_in legacy-plain legacy-plain.err "BOZ literal constant|Type mismatch"
fi
compile mpif77 "$legacy" legacy_f77
compile mpifort "$legacy" legacy_fort
for prog in legacy_f77 legacy_fort; do
    run "$prog" -- mpiexec -n 2 "./$prog"
    expect_status "$prog" 0
    expect_in "$prog" "$prog.out" "^legacy_random:   2 ranks agree, sum "
done
# Separate compile and link steps, as make does.
mpicc -c -o hello.o "$ex/hello.c" && mpicc -o hello_2step hello.o && pass "compile then link" || fail "compile then link"
# Hashi's collectives come ahead of MPICH's in every program, Fortran too
# (MPICH's Fortran bindings call the C MPI_* symbols).
expect_in show-cc show-cc.out " -lhashi-coll .*-lmpi\$"
expect_in show-fort show-fort.out " -lhashi-coll .*-lmpifort -lmpi\$"
for prog in hello_c hello_f90; do
    run "needed-$prog" -- sh -c "objdump -p ./$prog | grep NEEDED"
    expect_in "needed-$prog" "needed-$prog.out" "libhashi-coll"
done
for lang in c cxx f77 f90 2step; do
    run "hello-$lang" -- mpiexec -n 4 "./hello_$lang"
    expect_status "hello-$lang" 0
    expect_count "hello-$lang" "hello-$lang.out" "^Hello from rank [0-3] of 4 on " 4
    expect_in "hello-$lang" "hello-$lang.out" "4 ranks answered"
done
finish
