// SPDX-License-Identifier: BSD-3-Clause
#include "mpi/wrappers/fortran_dialect.hpp"
#include "mpi/wrappers/wrapper_args.hpp"

#include <boost/test/unit_test.hpp>
#include <map>

using namespace hashi::wrapper;

namespace {

const Toolchain tools {"gcc", "g++", "gfortran"};

Request req(
    Language lang, std::string_view name, std::vector<std::string> args, std::map<std::string, std::string> env = {})
{
    return parse_request(lang, name, args, tools, [env](const std::string& k) -> std::optional<std::string> {
        auto it = env.find(k);
        return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
    });
}

} // namespace

BOOST_AUTO_TEST_SUITE(wrapper_args)

BOOST_AUTO_TEST_CASE(languages_by_name)
{
    BOOST_TEST((language_of("mpicc") == Language::c));
    BOOST_TEST((language_of("mpicxx") == Language::cxx));
    BOOST_TEST((language_of("mpic++") == Language::cxx));
    BOOST_TEST((language_of("mpifort") == Language::fortran));
    BOOST_TEST((language_of("mpif77") == Language::fortran));
    BOOST_TEST((language_of("mpif90") == Language::fortran));
    BOOST_TEST(!language_of("gcc"));
}

BOOST_AUTO_TEST_CASE(link_and_compile_commands)
{
    auto link = command(req(Language::c, "mpicc", {"-O2", "x.c", "-o", "x"}), "/opt/h", {});
    BOOST_TEST(show(link) ==
        "gcc -O2 x.c -o x -I/opt/h/include -L/opt/h/lib -Wl,-rpath,/opt/h/lib "
        "-Wl,--enable-new-dtags -lmpi");
    auto compile = command(req(Language::c, "mpicc", {"-c", "x.c"}), "/opt/h", {});
    BOOST_TEST(show(compile) == "gcc -c x.c -I/opt/h/include");
    auto cxx = command(req(Language::cxx, "mpicxx", {"x.cxx"}), "/opt/h", {"-lhashi-coll"});
    BOOST_TEST(show(cxx) ==
        "g++ x.cxx -I/opt/h/include -L/opt/h/lib -Wl,-rpath,/opt/h/lib -Wl,--enable-new-dtags "
        "-lhashi-coll -lmpicxx -lmpi");
    auto fr = req(Language::fortran, "mpifort", {"x.f90"});
    fr.dialect_flags = {"-fallow-argument-mismatch"};
    auto f = command(fr, "/opt/h", {});
    BOOST_TEST(show(f) ==
        "gfortran -fallow-argument-mismatch x.f90 -I/opt/h/include -L/opt/h/lib "
        "-Wl,-rpath,/opt/h/lib -Wl,--enable-new-dtags -lmpifort -lmpi");
    for (const char* flag : {"-S", "-E", "-M", "-MM"}) {
        BOOST_TEST(!req(Language::c, "mpicc", {flag, "x.c"}).linking);
    }
}

BOOST_AUTO_TEST_CASE(show_and_info_flags)
{
    auto s = req(Language::c, "mpicc", {"-show"});
    BOOST_TEST(s.show);
    BOOST_TEST(s.args.empty());
    auto ci = req(Language::c, "mpicc", {"-compile-info"});
    BOOST_TEST(ci.show);
    BOOST_TEST(!ci.linking);
    auto li = req(Language::c, "mpicc", {"-link_info", "-c"});
    BOOST_TEST(li.linking);
    BOOST_TEST(req(Language::c, "mpicc", {"-v"}).version);
    BOOST_TEST(!req(Language::c, "mpicc", {"-v", "x.c"}).version);
    BOOST_TEST(show({"gcc", "-DX=\"a b\"", "it's"}) == "gcc '-DX=\"a b\"' 'it'\\''s'");
}

BOOST_AUTO_TEST_CASE(compiler_choice_precedence)
{
    BOOST_TEST(req(Language::c, "mpicc", {"x.c"}).compiler == "gcc");
    BOOST_TEST(req(Language::c, "mpicc", {"x.c"}, {{"MPICH_CC", "clang"}}).compiler == "clang");
    BOOST_TEST(req(Language::c, "mpicc", {"x.c"}, {{"MPICH_CC", "clang"}, {"HASHI_CC", "icx"}}).compiler == "icx");
    BOOST_TEST(req(Language::c, "mpicc", {"-cc=tcc", "x.c"}, {{"HASHI_CC", "icx"}}).compiler == "tcc");
    BOOST_TEST(req(Language::fortran, "mpif77", {"x.f"}, {{"MPICH_F77", "f77"}}).compiler == "f77");
    BOOST_TEST(req(Language::fortran, "mpif90", {"-fc=flang", "x.f"}).compiler == "flang");
    BOOST_CHECK_THROW(req(Language::c, "mpicc", {"-cc=", "x.c"}), WrapperError);
    // The wrapper adds no flag of its own that its caller did not choose.
    auto f = command(req(Language::fortran, "mpifort", {"x.f90"}, {{"HASHI_FC", "flang"}}), "/p", {});
    BOOST_TEST(f[1] == "x.f90");
}

BOOST_AUTO_TEST_CASE(legacy_fortran_flags_follow_the_gfortran_version)
{
    BOOST_TEST(gnu_fortran_major("GNU Fortran (Debian 12.2.0-14) 12.2.0\nCopyright (C) 2022\n").value_or(-1) == 12);
    BOOST_TEST(gnu_fortran_major("GNU Fortran (Ubuntu 9.4.0-1ubuntu1~20.04) 9.4.0\n").value_or(-1) == 9);
    BOOST_TEST(gnu_fortran_major("GNU Fortran (GCC) 10.1.0").value_or(-1) == 10);
    BOOST_TEST(!gnu_fortran_major("flang-new version 15.0.6"));
    BOOST_TEST(!gnu_fortran_major("ifx (IFX) 2023.0.0 20221201"));
    BOOST_TEST(!gnu_fortran_major("GNU Fortran (GCC) unknown"));
    BOOST_TEST(!gnu_fortran_major(""));
    const std::vector<std::string> both {"-fallow-argument-mismatch", "-fallow-invalid-boz"};
    BOOST_TEST(legacy_fortran_flags(12) == both);
    BOOST_TEST(legacy_fortran_flags(10) == both);
    BOOST_TEST(legacy_fortran_flags(9).empty());
    BOOST_TEST(legacy_fortran_flags(std::nullopt).empty());
    // What the wrapper asks of a compiler that is not there: nothing.
    BOOST_TEST(compiler_version_output("/nonexistent/gfortran").empty());
}

BOOST_AUTO_TEST_SUITE_END()
