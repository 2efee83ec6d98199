// SPDX-License-Identifier: BSD-3-Clause
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
    auto f = command(req(Language::fortran, "mpifort", {"x.f90"}), "/opt/h", {});
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
    // No gfortran-only flag for another Fortran compiler.
    auto f = command(req(Language::fortran, "mpifort", {"x.f90"}, {{"HASHI_FC", "flang"}}), "/p", {});
    BOOST_TEST(f[1] == "x.f90");
}

BOOST_AUTO_TEST_SUITE_END()
