// SPDX-License-Identifier: BSD-3-Clause
// The flags that let legacy Fortran build under mpifort/mpif77/mpif90 as it
// does with Debian's mpif90.mpich. FORTRAN 77 codes such as NPB pass
// buffers of different types to one MPI routine (mpif.h declares no
// interfaces) and write BOZ constants (Z'...', X'...') in DATA for REAL
// variables; gfortran 10 made both errors. Debian builds MPICH with
// -fallow-argument-mismatch -fallow-invalid-boz for every gfortran but
// gfortran-9, and MPICH bakes those FFLAGS into its wrappers; we decide
// from the version of the compiler actually used, so HASHI_FC=gfortran-9
// or another compiler gets no flag it would reject.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hashi::wrapper {

// The major version of GNU Fortran from what `FC --version` prints, e.g.
// "GNU Fortran (Debian 12.2.0-14) 12.2.0" -> 12; nullopt for any other
// compiler or text.
std::optional<int> gnu_fortran_major(std::string_view version_output);

// The flags added ahead of the user's arguments for a compiler of that
// GNU Fortran major version (none for gfortran < 10 or another compiler).
// The user's own -fno-allow-argument-mismatch / -fno-allow-invalid-boz come
// later on the command line and win.
std::vector<std::string> legacy_fortran_flags(std::optional<int> gnu_major);

// Runs `compiler --version` and returns what it printed on stdout (at most
// a few KiB); empty when it cannot be run or fails.
std::string compiler_version_output(const std::string& compiler);

} // namespace hashi::wrapper
