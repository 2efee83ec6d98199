# SPDX-License-Identifier: BSD-3-Clause
# The Debian packages on this machine, for real: `make deb` builds hashi,
# hashi-dev and hashi-relay from this build's installed tree; dpkg -i
# installs them; a program compiled with /usr/bin/mpicc runs as 2 ranks
# under /usr/bin/mpiexec; systemd-analyze verifies the relay's units (no
# systemd runs here as PID 1); dpkg --purge removes them; and nothing the
# packages installed, or their scripts made, is left behind.
source "$HASHI_SRCDIR/tests/integration/lib.sh"

if [[ $(id -u) -ne 0 ]]; then
    say "SKIP: needs root to install packages with dpkg"
    exit 77
fi
if [[ -n ${HASHI_ASAN_RUNTIME:-} ]]; then
    say "SKIP: packages are built from the plain build, not the instrumented one"
    exit 77
fi
for tool in dpkg-deb dpkg-shlibdeps systemd-analyze; do
    if ! command -v "$tool" >/dev/null; then
        say "SKIP: $tool missing (scripts/install-deps installs it)"
        exit 77
    fi
done
packages=(hashi-relay hashi-dev hashi)
for p in "${packages[@]}"; do
    if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'installed'; then
        fail "$p is already installed on this machine (left by an earlier run?); dpkg --purge ${packages[*]} first"
        finish
        exit 1
    fi
done

# Whatever happens, the packages do not outlive the test.
trap 'dpkg --purge "${packages[@]}" >/dev/null 2>&1' EXIT

# Everything the packages could touch, before.
snapshot() { find /usr /etc /lib/systemd /var/lib/dpkg/alternatives -xdev 2>/dev/null | sort; }
snapshot >before.list

if env -u MAKEFLAGS -u MFLAGS make -C "$HASHI_BUILDDIR" deb >make-deb.log 2>&1; then
    pass "make deb built $(cd "$HASHI_BUILDDIR"/deb && ls -- *.deb | paste -sd' ')"
else
    fail "make deb"; tail -20 make-deb.log | sed 's/^/    /'
    finish
    exit 1
fi
# hashi-o2g-dkms, made too when kmod/ is there, builds a kernel module on
# installation: tests/kmod installs it, in its VM's kernel's context.
debs=()
for p in "${packages[@]}"; do
    debs+=("$HASHI_BUILDDIR"/deb/"$p"_*.deb)
done

run dpkg-install -- dpkg -i "${debs[@]}"
expect_status dpkg-install 0
for p in "${packages[@]}"; do
    dpkg -L "$p" >"$p.files" 2>/dev/null
done

# The installed commands only: no staged prefix in PATH, no HASHI_PREFIX.
installed() { env -i PATH=/usr/bin:/bin HOME="$HOME" LANG=C "$@"; }
# /usr/bin/mpicc is Hashi's unless Debian's mpich or openmpi, with a higher
# priority, is installed too: then Hashi's is one of the choices.
mpicc=/usr/bin/mpicc mpiexec=/usr/bin/mpiexec
if [[ $(readlink -f /usr/bin/mpicc) == /usr/lib/hashi/bin/mpicc &&
    $(readlink -f /usr/bin/mpiexec) == /usr/lib/hashi/bin/mpiexec ]]; then
    pass "/usr/bin/mpicc and /usr/bin/mpiexec are Hashi's through alternatives"
elif update-alternatives --list mpi | grep -qx /usr/lib/hashi/bin/mpicc &&
    update-alternatives --list mpirun | grep -qx /usr/lib/hashi/bin/mpirun; then
    pass "another MPI is the default; Hashi's mpicc and mpirun are alternatives"
    mpicc=/usr/lib/hashi/bin/mpicc mpiexec=/usr/lib/hashi/bin/mpiexec
else
    fail "/usr/bin/mpicc -> $(readlink -f /usr/bin/mpicc), /usr/bin/mpiexec -> $(readlink -f /usr/bin/mpiexec)"
fi
run installed-mpicc -- installed "$mpicc" -O2 -o ranks "$programs/slurm_ranks.c"
expect_status installed-mpicc 0
run installed-job -- installed "$mpiexec" -n 2 ./ranks 2
expect_status installed-job 0
expect_count installed-job installed-job.out "^rank=[01] size=2 expected=2 .* ok$" 2
run installed-info -- installed /usr/bin/hashi-info
expect_status installed-info 0
expect_in installed-info installed-info.out "/usr/lib/hashi"

# The relay's units: hardened, with the secret as a credential and the
# configuration from /etc/hashi.
units=(/lib/systemd/system/hashi-impi-server.service /lib/systemd/system/hashi-impi-relay.service)
run verify-units -- systemd-analyze verify "${units[@]}"
expect_status verify-units 0
if [[ -s verify-units.err ]]; then fail "systemd-analyze verify said something"; sed 's/^/    /' verify-units.err; else
    pass "systemd-analyze verify: no complaints"; fi
for u in "${units[@]}"; do
    for setting in DynamicUser=yes ProtectSystem=strict NoNewPrivileges=yes \
        "LoadCredential=job.secret:/etc/hashi/job.secret" "EnvironmentFile=/etc/hashi/"; do
        expect_in "$(basename "$u")" "$u" "^$setting"
    done
done
# The same check refuses a unit whose program is missing, so it can fail.
sed 's|^ExecStart=/usr/lib/hashi/bin/impi-server|ExecStart=/usr/lib/hashi/bin/no-such-daemon|' "${units[0]}" >broken.service
run verify-broken -- systemd-analyze verify "$work/broken.service"
if [[ $status -ne 0 ]]; then pass "systemd-analyze verify refuses a unit with a missing program"; else
    fail "systemd-analyze verify accepted a missing program"; fi
if [[ $(stat -c '%a %U' /etc/hashi/job.secret 2>/dev/null) == "600 root" ]]; then
    pass "/etc/hashi/job.secret made, readable by root only"
else
    fail "/etc/hashi/job.secret: $(stat -c '%a %U' /etc/hashi/job.secret 2>&1)"
fi

run dpkg-purge -- dpkg --purge "${packages[@]}"
expect_status dpkg-purge 0
snapshot >after.list
# Another engineer's apt-get may change /usr meanwhile: only what the
# packages listed, alternatives and /etc/hashi count.
cat "${packages[@]/%/.files}" >installed.list
if diff before.list after.list >changed.list; then
    pass "nothing left behind: /usr, /etc, /lib/systemd and the alternatives as before"
else
    ours=$(grep -E '^[<>] ' changed.list | cut -c3- | grep -Fx -f installed.list;
        grep -E '^[<>] ' changed.list | cut -c3- | grep -E 'hashi|impi|/mpi|alternatives/mpi')
    if [[ -n $ours ]]; then fail "left behind or removed: $ours"; else
        pass "nothing of ours left behind ($(grep -c '^[<>]' changed.list) paths changed by others meanwhile)"; fi
fi
trap - EXIT
finish
