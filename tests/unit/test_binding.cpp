// SPDX-License-Identifier: BSD-3-Clause
// -bind-to / -map-by: parsing, and the bindings computed on hwloc's
// synthetic topologies (several sockets, hardware threads, caches, NUMA
// nodes) that this 2-core machine does not have.
#include "mpi/mpiexec/binding_plan.hpp"
#include "mpi/mpiexec/binding_spec.hpp"
#include "mpi/mpiexec/cpu_topology.hpp"
#include "mpi/mpiexec/options.hpp"
#include "mpi/mpiexec/rank_binding.hpp"

#include <boost/test/unit_test.hpp>

using namespace hashi::mpiexec;

namespace {

// Two sockets of four cores of two hardware threads: OS numbers 0-15 in
// order, core i holds cpus 2i and 2i+1, socket s holds cpus 8s..8s+7.
const char* const two_sockets = "package:2 core:4 pu:2";

// The CPUs of every binding of a plan, as "0-1" texts.
std::vector<std::string> cpus_of(const BindingPlan& plan)
{
    std::vector<std::string> out;
    for (const auto& b : plan.bindings) {
        out.push_back(cpu_list_text(b.cpus));
    }
    return out;
}

std::vector<std::string> plan(const char* topology, std::string_view bind, std::string_view map = {})
{
    return cpus_of(plan_bindings(CpuTopology::synthetic(topology), parse_binding(bind, map)));
}

// The message of the BindingError that `f` throws, or "" when none.
template <typename F> std::string error_of(F f)
{
    try {
        f();
    } catch (const BindingError& e) {
        return e.what();
    }
    return {};
}

} // namespace

BOOST_AUTO_TEST_SUITE(binding)

BOOST_AUTO_TEST_CASE(parses_hydra_spellings)
{
    BOOST_TEST(!parse_binding("", "").binds());
    BOOST_TEST(!parse_binding("none", "").binds());
    auto core = parse_binding("core", "");
    BOOST_TEST((core.kind == BindKind::object && core.bind.level == TopoLevel::core && core.bind.count == 1));
    BOOST_TEST((core.map.level == TopoLevel::core)); // -map-by defaults to the binding object
    auto two = parse_binding("core:2", "socket");
    BOOST_TEST(two.bind.count == 2);
    BOOST_TEST((two.map.level == TopoLevel::package && two.map.count == 1));
    BOOST_TEST((parse_binding("socket", "").bind.level == TopoLevel::package));
    BOOST_TEST((parse_binding("numa:1", "").bind.level == TopoLevel::numa));
    BOOST_TEST((parse_binding("l3cache", "").bind.level == TopoLevel::l3cache));
    BOOST_TEST((parse_binding("l2dcache", "").bind.level == TopoLevel::l2cache));
    BOOST_TEST((parse_binding("hwthread", "core").bind.level == TopoLevel::hwthread));
    BOOST_TEST((parse_binding("rr", "").kind == BindKind::round_robin));
    auto user = parse_binding("user:0+2,1-3,5x2", "");
    BOOST_TEST((user.kind == BindKind::user));
    BOOST_TEST((user.user_cpus == std::vector<std::vector<unsigned>> {{0, 2}, {1, 2, 3}, {5}, {5}}));
}

BOOST_AUTO_TEST_CASE(refuses_bad_spellings_saying_what_is_accepted)
{
    BOOST_TEST(error_of([] { parse_binding("cores", ""); }).find("unknown object 'cores'; choose one of core") !=
        std::string::npos);
    BOOST_TEST(
        error_of([] { parse_binding("core:0", ""); }).find("'0' is not a whole number from 1") != std::string::npos);
    BOOST_TEST(error_of([] { parse_binding("core:two", ""); }).find("'two'") != std::string::npos);
    BOOST_TEST(error_of([] { parse_binding("gpu", ""); }).find("I/O devices") != std::string::npos);
    BOOST_TEST(error_of([] { parse_binding("", "socket"); }).find("without -bind-to") != std::string::npos);
    BOOST_TEST(error_of([] { parse_binding("rr", "core"); }).find("drop -map-by") != std::string::npos);
    BOOST_TEST(error_of([] { parse_binding("user:", ""); }).find("no CPUs") != std::string::npos);
    BOOST_TEST(error_of([] { parse_binding("user:3-1", ""); }).find("runs backwards") != std::string::npos);
    BOOST_TEST(error_of([] { parse_binding("user:a", ""); }).find("user: takes CPU numbers") != std::string::npos);
    BOOST_TEST(error_of([] { parse_binding("core", "sockets"); }).find("-map-by 'sockets'") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(mpiexec_flags_reach_the_spec)
{
    auto env = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
    auto opt =
        parse_options({"-bind-to", "core:2", "-map-by", "socket", "-print-bindings", "-n", "2", "a"}, env, "tcp");
    BOOST_TEST(opt.binding.bind_text == "core:2");
    BOOST_TEST(opt.binding.map_text == "socket");
    BOOST_TEST(opt.print_bindings);
    BOOST_TEST(parse_options({"-binding", "hwthread", "a"}, env, "tcp").binding.binds()); // Hydra's older name
    BOOST_CHECK_THROW(parse_options({"-bind-to", "cpu", "a"}, env, "tcp"), UsageError);
    BOOST_CHECK_THROW(parse_options({"-bind-to"}, env, "tcp"), UsageError);
}

BOOST_AUTO_TEST_CASE(one_core_each_in_order)
{
    BOOST_TEST(plan(two_sockets, "core") ==
        (std::vector<std::string> {"0-1", "2-3", "4-5", "6-7", "8-9", "10-11", "12-13", "14-15"}));
    BOOST_TEST(plan(two_sockets, "core:2") == (std::vector<std::string> {"0-3", "4-7", "8-11", "12-15"}));
    BOOST_TEST(plan(two_sockets, "socket") == (std::vector<std::string> {"0-7", "8-15"}));
    BOOST_TEST(plan(two_sockets, "machine") == (std::vector<std::string> {"0-15"}));
}

BOOST_AUTO_TEST_CASE(map_by_socket_alternates_sockets)
{
    BOOST_TEST(plan(two_sockets, "core", "socket") ==
        (std::vector<std::string> {"0-1", "8-9", "2-3", "10-11", "4-5", "12-13", "6-7", "14-15"}));
    BOOST_TEST(plan(two_sockets, "core:2", "socket") == (std::vector<std::string> {"0-3", "8-11", "4-7", "12-15"}));
    // Hardware threads spread over the cores first, then the second thread
    // of each core.
    auto ht = plan(two_sockets, "hwthread", "core");
    BOOST_TEST(ht.size() == 16U);
    BOOST_TEST((std::vector<std::string>(ht.begin(), ht.begin() + 9) ==
        std::vector<std::string> {"0", "2", "4", "6", "8", "10", "12", "14", "1"}));
}

BOOST_AUTO_TEST_CASE(a_binding_larger_than_its_domain_covers_it)
{
    // -bind-to socket -map-by core: each core's rank gets that core's socket.
    BOOST_TEST(plan(two_sockets, "socket", "core") ==
        (std::vector<std::string> {"0-7", "0-7", "0-7", "0-7", "8-15", "8-15", "8-15", "8-15"}));
}

BOOST_AUTO_TEST_CASE(more_ranks_than_bindings_share_them_again)
{
    // As Hydra: local rank i gets binding i mod N.
    auto p = plan_bindings(CpuTopology::synthetic("core:2 pu:1"), parse_binding("core", ""));
    BOOST_TEST(cpus_of(p) == (std::vector<std::string> {"0", "1"}));
    BOOST_TEST(cpu_list_text(binding_of(p, 2)->cpus) == "0");
    BOOST_TEST(cpu_list_text(binding_of(p, 3)->cpus) == "1");
    BOOST_TEST(binding_of(p, 1)->what == "core 1");
}

BOOST_AUTO_TEST_CASE(caches_and_numa_nodes)
{
    // Two sockets, each one NUMA node and one L3 shared by two cores.
    const char* topo = "package:2 [numa] l3cache:1 core:2 pu:1";
    BOOST_TEST(plan(topo, "l3cache") == (std::vector<std::string> {"0-1", "2-3"}));
    BOOST_TEST(plan(topo, "numa") == (std::vector<std::string> {"0-1", "2-3"}));
    BOOST_TEST(plan(topo, "core", "l3cache") == (std::vector<std::string> {"0", "2", "1", "3"}));
}

BOOST_AUTO_TEST_CASE(unsatisfiable_bindings_name_the_problem)
{
    auto no_l3 = error_of([] { plan(two_sockets, "l3cache"); });
    BOOST_TEST(no_l3.find("has no l3cache") != std::string::npos, no_l3);
    BOOST_TEST(no_l3.find("2 sockets") != std::string::npos, no_l3);
    auto too_many = error_of([] { plan(two_sockets, "core:9"); });
    BOOST_TEST(too_many.find("asks for 9 cores per rank, this node has 8 cores") != std::string::npos, too_many);
    auto map_too_many = error_of([] { plan(two_sockets, "core", "socket:3"); });
    BOOST_TEST(map_too_many.find("-map-by socket:3") != std::string::npos, map_too_many);
    auto absent_cpu = error_of([] { plan(two_sockets, "user:1,16"); });
    BOOST_TEST(absent_cpu.find("CPU 16 is not one this node lets us use (0-15)") != std::string::npos, absent_cpu);
}

BOOST_AUTO_TEST_CASE(rr_and_user_lists)
{
    BOOST_TEST(plan("core:2 pu:2", "rr") == (std::vector<std::string> {"0", "1", "2", "3"}));
    auto p = plan_bindings(CpuTopology::synthetic(two_sockets), parse_binding("user:0+8,3", ""));
    BOOST_TEST(cpu_list_text(binding_of(p, 0)->cpus) == "0,8");
    BOOST_TEST(cpu_list_text(binding_of(p, 1)->cpus) == "3");
    BOOST_TEST(!binding_of(p, 2)); // as Hydra: ranks past the list are not bound
}

BOOST_AUTO_TEST_CASE(request_travels_on_a_command_line)
{
    BindRequest req {
        .bind_to = "core:2", .map_by = "socket", .local_index = 3, .rank = 11, .host = "c0n1", .report = true};
    auto words = bind_request_args(req);
    words.insert(words.end(), {"./prog", "arg"});
    size_t pos = 0;
    std::string error;
    auto back = parse_bind_request(words, pos, error);
    BOOST_REQUIRE(back);
    BOOST_TEST(back->bind_to == "core:2");
    BOOST_TEST(back->map_by == "socket");
    BOOST_TEST(back->local_index == 3);
    BOOST_TEST(back->rank == 11);
    BOOST_TEST(back->host == "c0n1");
    BOOST_TEST(back->report);
    BOOST_TEST(words[pos] == "./prog");
    std::vector<std::string> bad {"--local-index", "x", "--", "p"};
    pos = 0;
    BOOST_TEST(!parse_bind_request(bad, pos, error));
    std::vector<std::string> unterminated {"--bind-to", "core"};
    pos = 0;
    BOOST_TEST(!parse_bind_request(unterminated, pos, error));
    BOOST_TEST(error.find("-- program") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(cpu_lists_as_taskset_writes_them)
{
    BOOST_TEST(cpu_list_text({}) == "");
    BOOST_TEST(cpu_list_text({3}) == "3");
    BOOST_TEST(cpu_list_text({0, 1, 2, 3, 8, 10, 11}) == "0-3,8,10-11");
    BOOST_TEST(cpu_list_text({5, 4, 4}) == "4-5");
}

BOOST_AUTO_TEST_SUITE_END()
