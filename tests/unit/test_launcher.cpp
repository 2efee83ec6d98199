// SPDX-License-Identifier: BSD-3-Clause
#include "mpi/mpiexec/launcher.hpp"

#include <boost/test/unit_test.hpp>

using namespace hashi::mpiexec;

BOOST_AUTO_TEST_SUITE(launcher)

BOOST_AUTO_TEST_CASE(split_words_honours_quotes)
{
    BOOST_TEST(split_words("ip netns exec {host}") == (std::vector<std::string> {"ip", "netns", "exec", "{host}"}));
    BOOST_TEST(split_words(" a  'b c' \"d \\\"e\" f\\ g ") == (std::vector<std::string> {"a", "b c", "d \"e", "f g"}));
    BOOST_TEST(split_words("''") == std::vector<std::string> {""});
    BOOST_CHECK_THROW(split_words("a 'b"), UsageError);
}

BOOST_AUTO_TEST_CASE(shell_quote_round_trips_awkward_words)
{
    BOOST_TEST(shell_quote("plain/path-1.0") == "plain/path-1.0");
    BOOST_TEST(shell_quote("has space") == "'has space'");
    BOOST_TEST(shell_quote("it's") == "'it'\\''s'");
    BOOST_TEST(shell_quote("") == "''");
    BOOST_TEST(shell_quote("$HOME") == "'$HOME'");
}

BOOST_AUTO_TEST_CASE(argv_per_launcher)
{
    Options o;
    o.launcher = LauncherKind::fork;
    BOOST_TEST(launch_argv(o, {"h", 0}, {"./a", "x"}, "/w") == (std::vector<std::string> {"./a", "x"}));

    o.launcher = LauncherKind::exec;
    o.launcher_exec = "ip netns exec {host} env RANK={rank}";
    BOOST_TEST(launch_argv(o, {"c0n1", 3}, {"./a"}, "/w") ==
        (std::vector<std::string> {"ip", "netns", "exec", "c0n1", "env", "RANK=3", "./a"}));

    o.launcher = LauncherKind::ssh;
    o.launcher_exec.clear();
    // No environment on the command line: it is visible in ps on both hosts.
    auto argv = launch_argv(o, {"node7", 1}, {"./my prog", "arg"}, "/home/u");
    BOOST_TEST(argv ==
        (std::vector<std::string> {"ssh", "-x", "-o", "BatchMode=yes", "node7", "cd /home/u && exec './my prog' arg"}));

    // One srun step of one task per process; the program's words unquoted
    // (srun execs them, no shell), the working directory as --chdir.
    o.launcher = LauncherKind::slurm;
    BOOST_TEST(launch_argv(o, {"node[7]", 2}, {"./my prog", "arg"}, "/home/u") ==
        (std::vector<std::string> {"srun", "--nodes=1", "--ntasks=1", "--nodelist=node[7]", "--overlap",
            "--cpu-bind=none", "--chdir=/home/u", "--job-name=hashi-rank-2", "--quiet", "./my prog", "arg"}));
    o.launcher_exec = "srun --mpi=none";
    BOOST_TEST(launch_argv(o, {"n", 0}, {"./a"}, "/w").at(1) == "--mpi=none");
}

BOOST_AUTO_TEST_CASE(environment_precedence)
{
    Options o;
    o.genv = {{"G", "genv"}, {"J", "genv"}};
    AppSegment app;
    app.env = {{"G", "env"}};
    std::vector<EnvVar> inherited = {{"HOME", "/root"}, {"J", "inherited"}, {"PMI_RANK", "9"}, {"X", "1"}};
    auto env = process_environment(
        o, EnvPolicy::all, app, inherited, {{"FI_PROVIDER", "sockets"}, {"X", "job"}}, {{"PMI_RANK", "0"}});
    auto value = [&](const std::string& k) -> std::string {
        for (const auto& [n, v] : env) {
            if (n == k) {
                return v;
            }
        }
        return "<unset>";
    };
    BOOST_TEST(value("HOME") == "/root");
    BOOST_TEST(value("G") == "env");
    BOOST_TEST(value("J") == "genv");
    BOOST_TEST(value("X") == "job");
    BOOST_TEST(value("PMI_RANK") == "0");
    BOOST_TEST(value("FI_PROVIDER") == "sockets");

    auto none = process_environment(o, EnvPolicy::none, app, inherited, {}, {});
    BOOST_TEST(none.size() == 2U); // G and J from -genv/-env only

    o.env_list = {"HOME"};
    auto list = process_environment(o, EnvPolicy::list, app, inherited, {}, {});
    BOOST_TEST(list.size() == 3U);
}

BOOST_AUTO_TEST_SUITE_END()
