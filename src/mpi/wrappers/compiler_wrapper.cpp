// SPDX-License-Identifier: BSD-3-Clause
// mpicc, mpicxx, mpifort, mpif77, mpif90: compile and link against the
// Hashi install tree this binary belongs to. `-show` prints the command.
#include "common/environment.hpp"
#include "common/install_paths.hpp"
#include "config.h"
#include "fortran_dialect.hpp"
#include "wrapper_args.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>

using namespace hashi::wrapper;

int main(int argc, char** argv)
{
    std::string name = std::filesystem::path(argv[0]).filename().string();
    auto lang = language_of(name);
    if (!lang) {
        std::cerr << name << ": this wrapper must be invoked as mpicc, mpicxx, mpifort, mpif77 or mpif90" << std::endl;
        return 2;
    }
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) {
        std::cerr << name << ": no input files (try " << name << " -show, or " << name << " -o prog prog.c)"
                  << std::endl;
        return 2;
    }
    Request req;
    try {
        req =
            parse_request(*lang, name, args, {HASHI_WRAPPER_CC, HASHI_WRAPPER_CXX, HASHI_WRAPPER_FC}, hashi::env_value);
    } catch (const WrapperError& e) {
        std::cerr << name << ": error: " << e.what() << std::endl;
        return 2;
    }
    if (req.language == Language::fortran) {
        // Legacy Fortran as Debian's mpif90.mpich builds it; -show prints
        // the flags with the rest of the command.
        req.dialect_flags = legacy_fortran_flags(gnu_fortran_major(compiler_version_output(req.compiler)));
    }
    auto paths = hashi::install_paths();
    // Hashi's own libraries that go ahead of libmpi. libhashi-coll defines
    // MPI_Bcast, MPI_Allreduce, ... and must come first in the program's
    // symbol lookup, also for libmpifort's calls, which the program does not
    // make itself: so it is kept even under --as-needed.
    std::vector<std::string> hashi_libs {"-Wl,--push-state,--no-as-needed", "-lhashi-coll", "-Wl,--pop-state"};
#ifdef HASHI_WRAPPERS_LINK_ASAN
    // An ASan/UBSan build of Hashi: libhashi-coll is instrumented, and the
    // ASan runtime must come first in the program's library list.
    hashi_libs.insert(hashi_libs.begin() + 1, "-lasan");
#endif
    auto cmd = command(req, paths.prefix, hashi_libs);
    if (req.show) {
        std::cout << show(cmd) << std::endl;
        return 0;
    }
    if (req.version) {
        std::cout << name << " for Hashi MPI " << PACKAGE_VERSION << " (MPICH 4.0.2 base)" << std::endl;
    }
    std::vector<char*> cargv;
    for (auto& w : cmd) {
        cargv.push_back(w.data());
    }
    cargv.push_back(nullptr);
    ::execvp(cargv[0], cargv.data());
    std::cerr << name << ": cannot run the compiler '" << cmd[0] << "': " << std::strerror(errno)
              << " (choose another with -"
              << (req.language == Language::c            ? "cc"
                         : req.language == Language::cxx ? "cxx"
                                                         : "fc")
              << "=NAME or HASHI_"
              << (req.language == Language::c            ? "CC"
                         : req.language == Language::cxx ? "CXX"
                                                         : "FC")
              << ")" << std::endl;
    return 127;
}
