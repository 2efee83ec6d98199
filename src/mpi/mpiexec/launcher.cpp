// SPDX-License-Identifier: BSD-3-Clause
#include "launcher.hpp"

#include <algorithm>
#include <cctype>
#include <map>

namespace hashi::mpiexec {

std::vector<std::string> split_words(std::string_view text)
{
    std::vector<std::string> words;
    std::string cur;
    bool in_word = false;
    char quote = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (quote != 0) {
            if (c == quote) {
                quote = 0;
            } else if (c == '\\' && quote == '"' && i + 1 < text.size()) {
                cur += text[++i];
            } else {
                cur += c;
            }
        } else if (c == '\'' || c == '"') {
            quote = c;
            in_word = true;
        } else if (c == '\\' && i + 1 < text.size()) {
            cur += text[++i];
            in_word = true;
        } else if (c == ' ' || c == '\t' || c == '\n') {
            if (in_word) {
                words.push_back(std::move(cur));
                cur.clear();
                in_word = false;
            }
        } else {
            cur += c;
            in_word = true;
        }
    }
    if (quote != 0) {
        throw UsageError(
            "unbalanced " + std::string(1, quote) + " quote in launcher template '" + std::string(text) + "'");
    }
    if (in_word) {
        words.push_back(std::move(cur));
    }
    return words;
}

std::string shell_quote(std::string_view word)
{
    if (!word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
                std::string_view("-_./=:,+@%").find(c) != std::string_view::npos;
        })) {
        return std::string(word);
    }
    std::string q = "'";
    for (char c : word) {
        if (c == '\'') {
            q += "'\\''";
        } else {
            q += c;
        }
    }
    q += "'";
    return q;
}

namespace {

std::string substitute(std::string word, const LaunchTarget& target)
{
    const std::pair<std::string, std::string> vars[] = {
        {"{host}", target.host}, {"{rank}", std::to_string(target.rank)}};
    for (const auto& [name, value] : vars) {
        for (size_t pos = word.find(name); pos != std::string::npos; pos = word.find(name, pos + value.size())) {
            word.replace(pos, name.size(), value);
        }
    }
    return word;
}

} // namespace

std::vector<std::string> launch_argv(const Options& opt, const LaunchTarget& target,
    const std::vector<std::string>& program_argv, const std::string& wdir)
{
    std::vector<std::string> argv;
    switch (opt.launcher) {
    case LauncherKind::fork:
        argv = program_argv;
        break;
    case LauncherKind::exec:
        for (auto& w : split_words(opt.launcher_exec)) {
            argv.push_back(substitute(std::move(w), target));
        }
        argv.insert(argv.end(), program_argv.begin(), program_argv.end());
        break;
    case LauncherKind::ssh: {
        auto ssh = opt.launcher_exec.empty() ? std::string("ssh -x -o BatchMode=yes") : opt.launcher_exec;
        for (auto& w : split_words(ssh)) {
            argv.push_back(substitute(std::move(w), target));
        }
        argv.push_back(target.host);
        std::string cmd = "cd " + shell_quote(wdir) + " && exec";
        for (const auto& a : program_argv) {
            cmd += ' ';
            cmd += shell_quote(a);
        }
        argv.push_back(std::move(cmd));
        break;
    }
    case LauncherKind::slurm: {
        // One step per process, as ssh has one connection per process, so
        // the shim and its handoff on stdin work unchanged. --overlap: the
        // steps share the allocation's CPUs (without it the fifth step on a
        // four-CPU node waits for one to end); --cpu-bind=none: -bind-to is
        // mpiexec's to apply, in the shim.
        auto srun = opt.launcher_exec.empty() ? std::string("srun") : opt.launcher_exec;
        for (auto& w : split_words(srun)) {
            argv.push_back(substitute(std::move(w), target));
        }
        argv.insert(argv.end(),
            {"--nodes=1", "--ntasks=1", "--nodelist=" + target.host, "--overlap", "--cpu-bind=none",
                "--chdir=" + wdir, "--job-name=hashi-rank-" + std::to_string(target.rank), "--quiet"});
        argv.insert(argv.end(), program_argv.begin(), program_argv.end());
        break;
    }
    }
    return argv;
}

std::vector<EnvVar> process_environment(const Options& opt, EnvPolicy policy, const AppSegment& app,
    const std::vector<EnvVar>& inherited, const std::vector<EnvVar>& job_vars, const std::vector<EnvVar>& pmi_vars)
{
    std::vector<EnvVar> env;
    std::map<std::string, size_t> where;
    auto set = [&](const EnvVar& kv) {
        if (kv.first == "HASHI_IMPI_SECRET" || kv.first == "HASHI_IMPI_SECRET_FILE" || kv.first == "IMPI_AUTH_KEY") {
            return;
        }
        if (auto it = where.find(kv.first); it != where.end()) {
            env[it->second].second = kv.second;
        } else {
            where[kv.first] = env.size();
            env.push_back(kv);
        }
    };
    for (const auto& kv : inherited) {
        bool pass = policy == EnvPolicy::all ||
            (policy == EnvPolicy::list &&
                std::find(opt.env_list.begin(), opt.env_list.end(), kv.first) != opt.env_list.end());
        // PMI variables of an enclosing job would confuse MPICH's client.
        if (pass && !kv.first.starts_with("PMI_")) {
            set(kv);
        }
    }
    for (const auto& kv : job_vars) {
        set(kv);
    }
    for (const auto& kv : opt.genv) {
        set(kv);
    }
    for (const auto& kv : app.env) {
        set(kv);
    }
    for (const auto& kv : pmi_vars) {
        set(kv);
    }
    return env;
}

} // namespace hashi::mpiexec
