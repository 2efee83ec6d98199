# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# Sourced by the relay benchmarks: run the tools of one build's staged
# install, or nothing at all.
#
# use_stage ME BUILD TOOL...: stages an install of BUILD (make install
# DESTDIR=BUILD/tests/stage) unless there is one, puts its bin first in PATH
# and checks that every TOOL is found there; sets $prefix. BUILD is made
# absolute first: the benchmarks cd to their output directory, after which a
# relative "--build-dir _build" in PATH would find nothing, and mpicc,
# hashi-grid-run, mpiexec and impi-relay would silently come from the
# system's install (/usr/local: not this tree's provider; its G > 1 jobs
# failed in a probe of run-trunks).
use_stage() {
    local me=$1 build=$2 tool stage
    shift 2
    build=$(cd "$build" 2>/dev/null && pwd) || { echo "$me: no build directory '$build'" >&2; exit 1; }
    stage="$build/tests/stage"
    prefix="$stage$(sed -n 's/^prefix = //p' "$build/Makefile" 2>/dev/null)"
    if [[ ! -x $prefix/bin/hashi-grid-run ]]; then
        echo "$me: staging an install of $build into $stage"
        make -C "$build" install DESTDIR="$stage" >/dev/null
    fi
    export PATH="$prefix/bin:$PATH"
    for tool in "$@"; do
        [[ $(command -v "$tool") == "$prefix/bin/$tool" ]] ||
            { echo "$me: $tool is $(command -v "$tool" || echo missing), not $prefix/bin/$tool" >&2; exit 1; }
    done
}
