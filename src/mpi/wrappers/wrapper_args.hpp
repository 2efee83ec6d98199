// SPDX-License-Identifier: BSD-3-Clause
// What mpicc, mpicxx and mpifort do with their arguments: which language,
// which compiler, whether this is a link step, and the command to run.
// Kept apart from main() so every case is unit-tested.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace hashi::wrapper {

enum class Language { c, cxx, fortran };

struct Toolchain {
    std::string cc; // defaults compiled in from configure
    std::string cxx;
    std::string fc;
};

struct Request {
    Language language = Language::c;
    std::string compiler;
    bool show = false; // -show: print the command instead of running it
    bool compile_info = false; // -compile-info: the compile command only
    bool link_info = false; // -link-info: the link command
    bool linking = true; // false when -c, -S, -E, -M or -MM is given
    bool version = false; // -v alone: say who we are, then run compiler -v
    std::vector<std::string> args;
    // Flags for the compiler's dialect, right after its name and ahead of
    // the user's arguments (fortran_dialect.hpp); the caller fills them.
    std::vector<std::string> dialect_flags;
};

class WrapperError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// mpicc/mpicxx/mpic++/mpifort/mpif77/mpif90 -> language; nullopt otherwise.
std::optional<Language> language_of(std::string_view program_name);

// Parses the wrapper's own options out of `args`. Compiler choice:
// -cc=/-cxx=/-fc= flags, then HASHI_CC/HASHI_CXX/HASHI_FC, then MPICH_CC,
// MPICH_CXX, MPICH_FC (and MPICH_F77/MPICH_F90), then the toolchain.
Request parse_request(Language lang, std::string_view program_name, const std::vector<std::string>& args,
    const Toolchain& toolchain, const EnvLookup& env);

// The full compiler command line for `req` against the install tree at
// `prefix`. `hashi_libs` are Hashi's own libraries that go ahead of libmpi
// (the PMPI interposer, later).
std::vector<std::string> command(
    const Request& req, const std::filesystem::path& prefix, const std::vector<std::string>& hashi_libs);

// Joins a command for -show, quoting words that need it.
std::string show(const std::vector<std::string>& cmd);

} // namespace hashi::wrapper
