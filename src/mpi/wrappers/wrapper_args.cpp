// SPDX-License-Identifier: BSD-3-Clause
#include "wrapper_args.hpp"

#include <algorithm>

namespace hashi::wrapper {

std::optional<Language> language_of(std::string_view name)
{
    if (name == "mpicc") {
        return Language::c;
    }
    if (name == "mpicxx" || name == "mpic++" || name == "mpiCC") {
        return Language::cxx;
    }
    if (name == "mpifort" || name == "mpif77" || name == "mpif90") {
        return Language::fortran;
    }
    return std::nullopt;
}

Request parse_request(Language lang, std::string_view program_name, const std::vector<std::string>& args,
    const Toolchain& toolchain, const EnvLookup& env)
{
    Request req;
    req.language = lang;
    std::optional<std::string> from_flag;
    for (const auto& a : args) {
        auto value_of = [&](std::string_view flag) -> std::optional<std::string> {
            if (a.starts_with(flag)) {
                auto v = a.substr(flag.size());
                if (v.empty()) {
                    throw WrapperError(std::string(flag) + " needs a compiler name, e.g. " + std::string(flag) + "gcc");
                }
                return v;
            }
            return std::nullopt;
        };
        if (a == "-show" || a == "-showme") {
            req.show = true;
        } else if (a == "-compile-info" || a == "-compile_info") {
            req.compile_info = true;
            req.show = true;
        } else if (a == "-link-info" || a == "-link_info") {
            req.link_info = true;
            req.show = true;
        } else if (auto v = value_of("-cc="); v && lang == Language::c) {
            from_flag = v;
        } else if (auto v2 = value_of("-cxx="); v2 && lang == Language::cxx) {
            from_flag = v2;
        } else if (auto v3 = (a.starts_with("-fc=") ? value_of("-fc=")
                           : a.starts_with("-f77=") ? value_of("-f77=")
                                                    : value_of("-f90="));
                   v3 && lang == Language::fortran) {
            from_flag = v3;
        } else {
            if (a == "-c" || a == "-S" || a == "-E" || a == "-M" || a == "-MM") {
                req.linking = false;
            }
            req.args.push_back(a);
        }
    }
    if (req.compile_info) {
        req.linking = false;
    }
    if (req.link_info) {
        req.linking = true;
    }
    req.version = req.args.size() == 1 && req.args[0] == "-v" && !req.show;
    if (req.version) {
        req.linking = false;
    }

    std::vector<std::string> names;
    switch (lang) {
    case Language::c:
        names = {"HASHI_CC", "MPICH_CC"};
        req.compiler = toolchain.cc;
        break;
    case Language::cxx:
        names = {"HASHI_CXX", "MPICH_CXX"};
        req.compiler = toolchain.cxx;
        break;
    case Language::fortran:
        names = {"HASHI_FC", "MPICH_FC"};
        if (program_name == "mpif77") {
            names.emplace_back("MPICH_F77");
        } else if (program_name == "mpif90") {
            names.emplace_back("MPICH_F90");
        }
        req.compiler = toolchain.fc;
        break;
    }
    if (from_flag) {
        req.compiler = *from_flag;
    } else {
        for (const auto& n : names) {
            if (auto v = env(n); v && !v->empty()) {
                req.compiler = *v;
                break;
            }
        }
    }
    return req;
}

std::vector<std::string> command(
    const Request& req, const std::filesystem::path& prefix, const std::vector<std::string>& hashi_libs)
{
    const auto inc = (prefix / "include").string();
    const auto lib = (prefix / "lib").string();
    std::vector<std::string> cmd {req.compiler};
    cmd.insert(cmd.end(), req.dialect_flags.begin(), req.dialect_flags.end());
    cmd.insert(cmd.end(), req.args.begin(), req.args.end());
    if (req.version) {
        return cmd;
    }
    cmd.push_back("-I" + inc);
    if (!req.linking) {
        return cmd;
    }
    cmd.push_back("-L" + lib);
    cmd.emplace_back("-Wl,-rpath," + lib);
    cmd.emplace_back("-Wl,--enable-new-dtags");
    cmd.insert(cmd.end(), hashi_libs.begin(), hashi_libs.end());
    if (req.language == Language::cxx) {
        cmd.emplace_back("-lmpicxx");
    } else if (req.language == Language::fortran) {
        cmd.emplace_back("-lmpifort");
    }
    cmd.emplace_back("-lmpi");
    return cmd;
}

std::string show(const std::vector<std::string>& cmd)
{
    std::string line;
    for (const auto& w : cmd) {
        if (!line.empty()) {
            line += ' ';
        }
        bool plain = !w.empty() && std::none_of(w.begin(), w.end(), [](char c) {
            return c == ' ' || c == '\t' || c == '\'' || c == '"' || c == '\\' || c == '$' || c == '`';
        });
        if (plain) {
            line += w;
        } else {
            line += '\'';
            for (char c : w) {
                line += c == '\'' ? std::string("'\\''") : std::string(1, c);
            }
            line += '\'';
        }
    }
    return line;
}

} // namespace hashi::wrapper
