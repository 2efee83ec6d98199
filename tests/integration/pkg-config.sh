# SPDX-License-Identifier: BSD-3-Clause
# pkg-config against the staged install (make install DESTDIR=...): a C, a
# C++ and a Fortran program built with the plain compilers and only the
# flags pkg-config gives for hashi, mpi-cxx and mpi-fort, then run under
# mpiexec; mpich, mpi and mpi-c answer as MPICH users expect. The staged
# tree is not at its configured prefix, so this also shows the .pc files
# are relocatable.
source "$HASHI_SRCDIR/tests/integration/lib.sh"

if ! command -v pkg-config >/dev/null; then
    say "SKIP: pkg-config not installed (scripts/install-deps installs it)"
    exit 77
fi
export PKG_CONFIG_PATH="$HASHI_PREFIX/lib/pkgconfig"
# Only the staged tree's files: no system-wide mpich.pc or mpi.pc may answer.
export PKG_CONFIG_LIBDIR="$HASHI_PREFIX/lib/pkgconfig"
ex="$HASHI_SRCDIR/examples"

for name in hashi mpich mpi mpi-c mpi-cxx mpi-fort; do
    run "pc-$name" -- pkg-config --cflags --libs "$name"
    expect_status "pc-$name" 0
    # Every path points into the tree the .pc file is in, wherever that is.
    expect_in "pc-$name" "pc-$name.out" "^-I$HASHI_PREFIX/lib/pkgconfig/\.\./\.\./include "
done
expect_in pc-hashi pc-hashi.out " -lhashi-coll -Wl,--pop-state -lmpi *\$"
expect_in pc-mpi-cxx pc-mpi-cxx.out " -lmpicxx .* -lmpi *\$"
expect_in pc-mpi-fort pc-mpi-fort.out " -lmpifort .* -lmpi *\$"
run version-mpich -- pkg-config --modversion mpich
expect_in version-mpich version-mpich.out "^4\.0\.2\$"
run atleast -- pkg-config --atleast-version=3.4 mpich
expect_status atleast 0
run fflags -- pkg-config --variable=fflags mpich
expect_in fflags fflags.out "-fallow-argument-mismatch .*-I$HASHI_PREFIX/"

# build NAME LANGUAGE-COMPILER PACKAGE SOURCE
build() {
    # shellcheck disable=SC2046 # pkg-config's words are meant to split
    if $2 -O2 -o "$1" "$4" $(pkg-config --cflags --libs "$3") >"$1.build.log" 2>&1; then
        pass "built $(basename "$4") with $2 and pkg-config $3"
    else
        fail "building $(basename "$4") with $2 and pkg-config $3"; sed 's/^/    /' "$1.build.log" | head -20
    fi
}
build hello_c gcc hashi "$ex/hello.c"
build hello_cxx g++ mpi-cxx "$ex/hello.cxx"
build hello_f90 gfortran mpi-fort "$ex/hello_f90.f90"
run needed -- sh -c "objdump -p ./hello_c | grep NEEDED"
expect_in needed needed.out "libhashi-coll"
for lang in c cxx f90; do
    run "hello-$lang" -- mpiexec -n 2 "./hello_$lang"
    expect_status "hello-$lang" 0
    expect_count "hello-$lang" "hello-$lang.out" "^Hello from rank [01] of 2 on " 2
done
finish
