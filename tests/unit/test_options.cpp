// SPDX-License-Identifier: BSD-3-Clause
#include "mpi/mpiexec/options.hpp"

#include <boost/test/unit_test.hpp>
#include <map>

using namespace hashi::mpiexec;

namespace {

const std::string data_dir = std::string(HASHI_TEST_SRCDIR) + "/tests/unit/data/";

Options parse(std::vector<std::string> args, std::map<std::string, std::string> env = {})
{
    return parse_options(
        args,
        [env](const std::string& k) -> std::optional<std::string> {
            auto it = env.find(k);
            return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
        },
        "sockets");
}

std::string error_of(std::vector<std::string> args, std::map<std::string, std::string> env = {})
{
    try {
        parse(std::move(args), std::move(env));
    } catch (const UsageError& e) {
        return e.what();
    }
    return "no error";
}

} // namespace

BOOST_AUTO_TEST_SUITE(options)

BOOST_AUTO_TEST_CASE(simple_run)
{
    auto o = parse({"-n", "4", "./a.out", "-x", "--y"});
    BOOST_REQUIRE_EQUAL(o.apps.size(), 1U);
    BOOST_TEST(o.apps[0].nprocs == 4);
    BOOST_TEST(o.apps[0].argv == (std::vector<std::string> {"./a.out", "-x", "--y"}));
    BOOST_TEST(o.provider == "sockets");
    BOOST_TEST((o.launcher == LauncherKind::fork));
    BOOST_TEST(o.total_procs() == 4);
}

BOOST_AUTO_TEST_CASE(program_arguments_that_look_like_flags_stay_with_the_program)
{
    auto o = parse({"-np", "2", "prog", "-n", "7", "-hosts", "x"});
    BOOST_TEST(o.apps[0].nprocs == 2);
    BOOST_TEST(o.apps[0].argv.size() == 5U);
    BOOST_TEST(o.hosts.empty());
}

BOOST_AUTO_TEST_CASE(mpmd_segments)
{
    auto o = parse(
        {"-genv", "A", "1", "-n", "1", "-env", "B", "2", "master", ":", "-n", "3", "-wdir", "/tmp", "worker", "w"});
    BOOST_REQUIRE_EQUAL(o.apps.size(), 2U);
    BOOST_TEST(o.apps[0].argv == std::vector<std::string> {"master"});
    BOOST_TEST(o.apps[0].env.size() == 1U);
    BOOST_TEST(o.apps[1].nprocs == 3);
    BOOST_TEST(o.apps[1].wdir.value() == "/tmp");
    BOOST_TEST(o.apps[1].env.empty());
    BOOST_TEST(o.genv.size() == 1U);
    BOOST_TEST(o.total_procs() == 4);
}

BOOST_AUTO_TEST_CASE(hosts_and_hostfiles)
{
    auto o = parse({"-hosts", "a:2,b", "prog"});
    BOOST_TEST(o.hosts.size() == 2U);
    BOOST_TEST(o.apps[0].nprocs == 3); // all slots when -n is absent
    auto f = parse({"-f", data_dir + "hosts-good", "-ppn", "1", "-n", "2", "prog"});
    BOOST_TEST(f.hosts.size() == 2U);
    BOOST_TEST(f.hosts[1].slots == 3);
    BOOST_TEST(f.ppn == 1);
    auto e = parse({"-n", "1", "prog"}, {{"HASHI_HOSTFILE", data_dir + "hosts-good"}});
    BOOST_TEST(e.hosts.size() == 2U);
}

BOOST_AUTO_TEST_CASE(environment_defaults_are_weaker_than_flags)
{
    BOOST_TEST(parse({"p"}, {{"HASHI_PROVIDER", "tcp;ofi_rxm"}}).provider == "tcp;ofi_rxm");
    BOOST_TEST(parse({"p"}, {{"FI_PROVIDER", "tcp"}}).provider == "tcp");
    BOOST_TEST(parse({"-provider", "x", "p"}, {{"HASHI_PROVIDER", "y"}}).provider == "x");
    BOOST_TEST(parse({"p"}, {{"MPIEXEC_TIMEOUT", "30"}}).timeout_seconds == 30);
    BOOST_TEST(parse({"-timeout", "5", "p"}, {{"MPIEXEC_TIMEOUT", "30"}}).timeout_seconds == 5);
    auto l = parse({"-hosts", "a", "p"}, {{"HASHI_LAUNCHER_EXEC", "ip netns exec {host}"}});
    BOOST_TEST((l.launcher == LauncherKind::exec));
}

BOOST_AUTO_TEST_CASE(slurm_allocation_gives_hosts_and_launcher)
{
    const std::map<std::string, std::string> slurm = {
        {"SLURM_JOB_ID", "42"}, {"SLURM_JOB_NODELIST", "n[01-03]"}, {"SLURM_TASKS_PER_NODE", "2(x2),1"}};
    auto o = parse({"prog"}, slurm);
    BOOST_TEST((o.launcher == LauncherKind::slurm));
    BOOST_REQUIRE_EQUAL(o.hosts.size(), 3U);
    BOOST_TEST((o.hosts[0] == HostSlots {"n01", 2}));
    BOOST_TEST((o.hosts[2] == HostSlots {"n03", 1}));
    BOOST_TEST(o.apps[0].nprocs == 5); // every slot
    // Hosts given, or a launcher chosen: the allocation is not used by itself.
    BOOST_TEST((parse({"-hosts", "a", "prog"}, slurm).launcher == LauncherKind::fork));
    BOOST_TEST((parse({"-launcher", "fork", "prog"}, slurm).launcher == LauncherKind::fork));
    auto env_fork = slurm;
    env_fork["HASHI_LAUNCHER"] = "fork";
    BOOST_TEST((parse({"prog"}, env_fork).launcher == LauncherKind::fork));
    // Forced with hosts of its own: those hosts, srun for the steps.
    auto forced = parse({"-launcher", "slurm", "-hosts", "x:4", "prog"}, slurm);
    BOOST_TEST((forced.launcher == LauncherKind::slurm));
    BOOST_TEST((forced.hosts == std::vector<HostSlots> {{"x", 4}}));
    // Only SLURM_NODELIST (older Slurm) is enough.
    auto old = parse({"-launcher", "slurm", "prog"}, {{"SLURM_NODELIST", "a,b"}, {"SLURM_TASKS_PER_NODE", "1(x2)"}});
    BOOST_TEST(old.hosts.size() == 2U);
}

BOOST_AUTO_TEST_CASE(slurm_launcher_errors)
{
    BOOST_TEST(error_of({"-launcher", "slurm", "p"}).starts_with("-launcher slurm needs a Slurm allocation"));
    BOOST_TEST(error_of({"-launcher", "slurm", "p"}, {{"SLURM_JOB_NODELIST", "n1"}})
                   .starts_with("-launcher slurm needs a Slurm allocation"));
    BOOST_TEST(error_of({"p"}, {{"SLURM_JOB_ID", "1"}, {"SLURM_JOB_NODELIST", "n[1-"}, {"SLURM_TASKS_PER_NODE", "1"}}) ==
        "the Slurm allocation cannot be read (SLURM_JOB_NODELIST='n[1-', SLURM_TASKS_PER_NODE='1'): "
        "host list 'n[1-' has a '[' without ']'");
    BOOST_TEST(error_of({"p"}, {{"SLURM_JOB_ID", "1"}, {"SLURM_JOB_NODELIST", "n[1-2]"}, {"SLURM_TASKS_PER_NODE", "1"}})
                   .ends_with("the node list 'n[1-2]' names 2 nodes but the tasks per node '1' describe 1"));
}

BOOST_AUTO_TEST_CASE(exec_launcher_template)
{
    auto o = parse({"-launcher", "exec", "-launcher-exec", "ip netns exec {host}", "-hosts", "n1,n2", "prog"});
    BOOST_TEST((o.launcher == LauncherKind::exec));
    BOOST_TEST(o.launcher_exec == "ip netns exec {host}");
    auto implied = parse({"-launcher-exec", "ip netns exec {host}", "-hosts", "n1", "prog"});
    BOOST_TEST((implied.launcher == LauncherKind::exec));
}

BOOST_AUTO_TEST_CASE(env_policies)
{
    BOOST_TEST((parse({"-genvnone", "p"}).env_policy == EnvPolicy::none));
    auto o = parse({"-genvlist", "PATH,HOME", "p"});
    BOOST_TEST((o.env_policy == EnvPolicy::list));
    BOOST_TEST(o.env_list == (std::vector<std::string> {"PATH", "HOME"}));
}

BOOST_AUTO_TEST_CASE(every_error_says_what_was_wrong)
{
    BOOST_TEST(error_of({"-bogus", "p"}) == "unknown option '-bogus' (mpiexec -help lists the options)");
    BOOST_TEST(error_of({}) == "no program given (usage: mpiexec [options] -n N program [args])");
    BOOST_TEST(error_of({"-n", "4"}) == "no program given (usage: mpiexec [options] -n N program [args])");
    BOOST_TEST(error_of({"-n"}) == "option -n needs a value");
    BOOST_TEST(error_of({"-n", "four", "p"}) == "option -n 'four' is not a whole number from 1 to 1048576");
    BOOST_TEST(error_of({"-n", "0", "p"}) == "option -n '0' is not a whole number from 1 to 1048576");
    BOOST_TEST(error_of({"-n", "-3", "p"}) == "option -n '-3' is not a whole number from 1 to 1048576");
    BOOST_TEST(error_of({"-n", "2x", "p"}) == "option -n '2x' is not a whole number from 1 to 1048576");
    BOOST_TEST(error_of({"-genv", "A"}) == "option -genv A needs a value");
    BOOST_TEST(error_of({"-genv", "1A", "v", "p"}) == "-genv: '1A' is not a valid environment variable name");
    BOOST_TEST(error_of({"-env", "A=B", "v", "p"}) == "-env: 'A=B' is not a valid environment variable name");
    BOOST_TEST(error_of({"-genvlist", "A,,B", "p"}) == "-genvlist: '' is not a valid environment variable name");
    BOOST_TEST(error_of({":", "p"}) == "nothing before ':' (each ':' must follow a program)");
    BOOST_TEST(error_of({"p", ":", ":", "q"}) == "nothing before ':' (each ':' must follow a program)");
    BOOST_TEST(error_of({"p", ":"}) == "no program given (usage: mpiexec [options] -n N program [args])");
    BOOST_TEST(error_of({"-launcher", "rsh", "p"}) == "unknown launcher 'rsh' (choose fork, ssh, exec or slurm)");
    BOOST_TEST(error_of({"-launcher", "exec", "-hosts", "a", "p"}) ==
        "-launcher exec needs a template, e.g. -launcher-exec 'ip netns exec {host}'");
    BOOST_TEST(error_of({"-launcher-exec", "ip netns exec", "-hosts", "a", "p"}) ==
        "-launcher-exec template 'ip netns exec' does not mention {host}; every process would start the same way");
    BOOST_TEST(error_of({"-launcher", "fork", "-launcher-exec", "x {host}", "p"})
                   .starts_with("-launcher-exec was given with -launcher fork"));
    BOOST_TEST(error_of({"-launcher", "ssh", "p"}) == "launcher ssh needs hosts (-hosts or -f)");
    BOOST_TEST(error_of({"-launcher-exec", "  ", "p"}) == "-launcher-exec: the template is empty");
    BOOST_TEST(error_of({"-hosts", "a:0", "p"}) ==
        "-hosts: host list entry 'a:0': slot count '0' is not a whole number from 1 to 1048576");
    BOOST_TEST(error_of({"-hosts", "a", "-f", data_dir + "hosts-good", "p"}) ==
        "hosts given twice (use one -hosts or one -f)");
    BOOST_TEST(error_of({"-f", data_dir + "hosts-bad", "p"}) ==
        "bad hostfile: " + data_dir + "hosts-bad:2: slot count 'two' is not a whole number from 1 to 1048576");
    BOOST_TEST(error_of({"-f", "/no/such/file", "p"}) == "bad hostfile: cannot read hostfile '/no/such/file'");
    BOOST_TEST(
        error_of({"-timeout", "0", "p"}) == "option -timeout '0' is not a whole number from 1 to 31536000 seconds");
    BOOST_TEST(error_of({"p"}, {{"MPIEXEC_TIMEOUT", "soon"}}) ==
        "MPIEXEC_TIMEOUT='soon' is not a whole number from 1 to 31536000 seconds");
    BOOST_TEST(error_of({"p"}, {{"HASHI_LAUNCHER", "pbs"}}) ==
        "HASHI_LAUNCHER (environment): unknown launcher 'pbs' (choose fork, ssh, exec or slurm)");
    BOOST_TEST(error_of({"-provider", "", "p"}) == "-provider: the provider name is empty");
    BOOST_TEST(error_of({"-ppn", "x", "p"}) == "option -ppn 'x' is not a whole number from 1 to 1048576");
}

BOOST_AUTO_TEST_CASE(help_and_version_need_no_program)
{
    BOOST_TEST(parse({"-help"}).help);
    BOOST_TEST(parse({"--version"}).version);
    BOOST_TEST(usage_text().find("-launcher-exec") != std::string::npos);
    BOOST_TEST(usage_text().find("fork|ssh|exec|slurm") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
