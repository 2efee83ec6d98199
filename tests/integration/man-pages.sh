# SPDX-License-Identifier: BSD-3-Clause
# The installed manual pages: every program has one in share/man/man1, each
# renders with groff's warnings on and none reported, the real pages have
# the sections a reader looks for, and every option a program's -help lists
# is in its page.
source "$HASHI_SRCDIR/tests/integration/lib.sh"

if ! command -v groff >/dev/null; then
    say "SKIP: groff not installed (scripts/install-deps installs groff-base)"
    exit 77
fi
mandir="$HASHI_PREFIX/share/man"
pages=(mpiexec mpirun mpicc mpicxx mpic++ mpifort mpif77 mpif90 impi-server impi-relay hashi-info hashi-testbed hashi-grid-run)
aliases=" mpirun mpicxx mpic++ mpifort mpif77 mpif90 "

for p in "${pages[@]}"; do
    page="$mandir/man1/$p.1"
    if [[ ! -s $page ]]; then
        fail "$p: no page at share/man/man1/$p.1"
        continue
    fi
    # -ww: every warning; -z: no output; -I: where .so finds man1/...
    groff -ww -z -man -I "$mandir" "$page" >"$p.groff" 2>&1
    if [[ $? -eq 0 && ! -s $p.groff ]]; then pass "$p: renders without warnings"; else
        fail "$p: groff -ww says"; sed 's/^/    /' "$p.groff" | head -10; fi
    # Wide lines and no hyphenation, so options stay whole words; ASCII, so
    # \- is a plain '-'.
    groff -man -Tascii -rLL=250n -rHY=0 -P-cbou -I "$mandir" "$page" >"$p.txt" 2>/dev/null
    if [[ $aliases != *" $p "* ]]; then
        for section in NAME SYNOPSIS DESCRIPTION OPTIONS ENVIRONMENT "EXIT STATUS" EXAMPLES "SEE ALSO"; do
            grep -q "^$section\$" "$p.txt" || fail "$p: no $section section"
        done
        pass "$p: has its sections"
    fi
done
expect_in mpif77-alias mpif77.txt "mpicc, mpicxx, mpic\+\+, mpifort, mpif77, mpif90 - compile and link"
expect_in mpirun-alias mpirun.txt "mpiexec, mpirun - start an MPI job"

# options_of TEXT-FILE: the options a -help text lists, one per line (the
# words starting with '-' at the start of an indented line, and their
# comma-separated other names).
options_of() {
    grep -oE '^ +-[-A-Za-z][-A-Za-z0-9_]*(, +-[-A-Za-z][-A-Za-z0-9_]*)*' "$1" | tr ',' '\n' | tr -d ' '
}
check_options() { # program help-file
    local program=$1 n=0 missing=()
    for opt in $(options_of "$2"); do
        n=$((n + 1))
        grep -qE -- "(^|[^-A-Za-z0-9])$opt([^-A-Za-z0-9_]|\$)" "$program.txt" || missing+=("$opt")
    done
    if [[ $n -lt 3 ]]; then
        fail "$program: found only $n options in its help"
    elif [[ ${#missing[@]} -eq 0 ]]; then
        pass "$program: all $n options of its help are in its page"
    else
        fail "$program: options of its help missing from its page: ${missing[*]}"
    fi
}
mpiexec -help >mpiexec.help 2>&1
check_options mpiexec mpiexec.help
impi-server -help >impi-server.help 2>&1
check_options impi-server impi-server.help
impi-relay -help >impi-relay.help 2>&1
check_options impi-relay impi-relay.help
hashi-info --help >hashi-info.help 2>&1
check_options hashi-info hashi-info.help
hashi-testbed --help >hashi-testbed.help 2>&1
check_options hashi-testbed hashi-testbed.help
hashi-grid-run --help >hashi-grid-run.help 2>&1
check_options hashi-grid-run hashi-grid-run.help
finish
