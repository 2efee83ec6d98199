// SPDX-License-Identifier: BSD-3-Clause
#include "mpi/mpiexec/slurm_allocation.hpp"

#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

using namespace hashi::mpiexec;

namespace {

using Names = std::vector<std::string>;

void fails_with(auto parse, const char* text, const char* expected)
{
    try {
        parse(text);
    } catch (const SlurmAllocationError& e) {
        BOOST_TEST_INFO(text << " -> " << e.what());
        BOOST_TEST(std::string(e.what()).find(expected) != std::string::npos);
        return;
    }
    BOOST_ERROR(std::string("no error for '") + text + "'");
}

} // namespace

// The expansions below are what `scontrol show hostnames` of Debian 12's
// Slurm 22.05 prints for the same lists, except where a case says otherwise.
BOOST_AUTO_TEST_SUITE(slurm_allocation)

BOOST_AUTO_TEST_CASE(single_hosts_and_plain_lists)
{
    BOOST_TEST(expand_slurm_nodelist("vm") == Names {"vm"});
    BOOST_TEST(expand_slurm_nodelist("a,b.example.org,c-1") == (Names {"a", "b.example.org", "c-1"}));
}

BOOST_AUTO_TEST_CASE(ranges_keep_leading_zeros)
{
    // The lower bound's width: "8-011" is 8, 9, 10, 11.
    BOOST_TEST(expand_slurm_nodelist("n[8-011]") == (Names {"n8", "n9", "n10", "n11"}));
    BOOST_TEST(expand_slurm_nodelist("node[01-04,07]") == (Names {"node01", "node02", "node03", "node04", "node07"}));
    BOOST_TEST(expand_slurm_nodelist("n[8-11]") == (Names {"n8", "n9", "n10", "n11"}));
    BOOST_TEST(expand_slurm_nodelist("n[098-101]") == (Names {"n098", "n099", "n100", "n101"}));
    BOOST_TEST(expand_slurm_nodelist("n[5]") == Names {"n5"});
}

BOOST_AUTO_TEST_CASE(several_entries_with_and_without_brackets)
{
    BOOST_TEST(expand_slurm_nodelist("login,node[1-2],gpu[01,03]") ==
        (Names {"login", "node1", "node2", "gpu01", "gpu03"}));
}

BOOST_AUTO_TEST_CASE(suffixes_and_several_brackets_in_one_name)
{
    // Slurm 22.05's scontrol refuses a suffix after the last bracket (it
    // never writes one); taking it is harmless.
    BOOST_TEST(expand_slurm_nodelist("n[1-2]-ib") == (Names {"n1-ib", "n2-ib"}));
    BOOST_TEST(expand_slurm_nodelist("n[1-2]x[1-2]") == (Names {"n1x1", "n1x2", "n2x1", "n2x2"}));
    BOOST_TEST(expand_slurm_nodelist("rack[1-2]-n[1-2]") == (Names {"rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2"}));
}

BOOST_AUTO_TEST_CASE(malformed_node_lists_are_refused_with_the_reason)
{
    auto parse = [](const char* t) { return expand_slurm_nodelist(t); };
    fails_with(parse, "", "empty");
    fails_with(parse, "a,,b", "empty entry"); // Slurm skips it; it never writes one
    fails_with(parse, ",a", "empty entry");
    fails_with(parse, "a,", "empty entry");
    fails_with(parse, "n[1-3", "'[' without ']'");
    fails_with(parse, "n1-3]", "']' without '['");
    fails_with(parse, "n[1-[2]]", "inside brackets");
    fails_with(parse, "n[]", "empty brackets");
    fails_with(parse, "n[1,,2]", "is not a number or a range");
    fails_with(parse, "n[a-c]", "is not a number or a range");
    fails_with(parse, "n[1-]", "is not a number or a range");
    fails_with(parse, "n[1-2-3]", "is not a number or a range");
    fails_with(parse, "n[4-2]", "runs backwards");
    fails_with(parse, "n[1-99999999]", "more than 1048576 hosts");
    fails_with(parse, "n[1-2000]x[1-2000]", "more than 1048576 hosts");
    fails_with(parse, "bad host", "not part of a host name");
    fails_with(parse, "n(1)", "not part of a host name");
}

BOOST_AUTO_TEST_CASE(tasks_per_node_forms)
{
    BOOST_TEST(expand_slurm_tasks_per_node("4") == std::vector<int> {4});
    BOOST_TEST(expand_slurm_tasks_per_node("2(x3),1") == (std::vector<int> {2, 2, 2, 1}));
    BOOST_TEST(expand_slurm_tasks_per_node("1,3(x2),2(x1)") == (std::vector<int> {1, 3, 3, 2}));
}

BOOST_AUTO_TEST_CASE(malformed_tasks_per_node_are_refused_with_the_reason)
{
    auto parse = [](const char* t) { return expand_slurm_tasks_per_node(t); };
    fails_with(parse, "", "empty");
    fails_with(parse, "0", "is not a whole number from 1 to");
    fails_with(parse, "x", "is not a whole number");
    fails_with(parse, "2,", "is not a whole number");
    fails_with(parse, "2(3)", "is not N or N(xM)");
    fails_with(parse, "2(x3", "is not N or N(xM)");
    fails_with(parse, "2(x)", "is not N or N(xM)");
    fails_with(parse, "2(x0)", "repeat count '0' is not a whole number from 1 to");
    fails_with(parse, "(x2)", "count '' is not a whole number");
    fails_with(parse, "-1", "is not a whole number");
    fails_with(parse, "1(x2000000)", "repeat count");
}

BOOST_AUTO_TEST_CASE(hosts_with_their_slots)
{
    auto h = slurm_hosts("node[01-03],gpu7", "2(x3),1");
    BOOST_REQUIRE_EQUAL(h.size(), 4U);
    BOOST_TEST((h[0] == HostSlots {"node01", 2}));
    BOOST_TEST((h[2] == HostSlots {"node03", 2}));
    BOOST_TEST((h[3] == HostSlots {"gpu7", 1}));
}

BOOST_AUTO_TEST_CASE(node_and_task_counts_must_agree)
{
    auto parse = [](const char* t) { return slurm_hosts("n[1-3]", t); };
    fails_with(parse, "2(x2)", "names 3 nodes but the tasks per node '2(x2)' describe 2");
    fails_with(parse, "1(x4)", "describe 4");
}

BOOST_AUTO_TEST_SUITE_END()
