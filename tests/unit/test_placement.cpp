// SPDX-License-Identifier: BSD-3-Clause
#include "mpi/mpiexec/placement.hpp"

#include <boost/test/unit_test.hpp>

using namespace hashi::mpiexec;

BOOST_AUTO_TEST_SUITE(placement)

BOOST_AUTO_TEST_CASE(no_hosts_means_one_node)
{
    auto p = place_ranks({}, 4, 0, "me");
    BOOST_TEST(p.node_names == std::vector<std::string> {"me"});
    BOOST_TEST(p.node_of_rank == (std::vector<int> {0, 0, 0, 0}));
    BOOST_TEST(process_mapping(p.node_of_rank) == "(vector,(0,1,4))");
}

BOOST_AUTO_TEST_CASE(fills_slots_then_wraps)
{
    auto p = place_ranks({{"a", 2}, {"b", 1}}, 5, 0, "me");
    BOOST_TEST(p.node_of_rank == (std::vector<int> {0, 0, 1, 0, 0}));
    BOOST_TEST(process_mapping(p.node_of_rank) == "(vector,(0,1,2),(1,1,1),(0,1,2))");
}

BOOST_AUTO_TEST_CASE(ppn_overrides_slots)
{
    auto p = place_ranks({{"a", 8}, {"b", 8}}, 4, 2, "me");
    BOOST_TEST(p.node_of_rank == (std::vector<int> {0, 0, 1, 1}));
    BOOST_TEST(process_mapping(p.node_of_rank) == "(vector,(0,2,2))");
}

BOOST_AUTO_TEST_CASE(repeated_host_names_are_one_node)
{
    auto p = place_ranks({{"a", 1}, {"b", 1}, {"a", 1}}, 3, 0, "me");
    BOOST_TEST(p.node_names.size() == 2U);
    BOOST_TEST(p.node_of_rank == (std::vector<int> {0, 1, 0}));
}

BOOST_AUTO_TEST_CASE(uneven_blocks)
{
    BOOST_TEST(process_mapping({0, 0, 0, 1, 2, 2}) == "(vector,(0,1,3),(1,1,1),(2,1,2))");
    BOOST_TEST(process_mapping({0, 1, 2, 3}) == "(vector,(0,4,1))");
    BOOST_TEST(process_mapping({0}) == "(vector,(0,1,1))");
}

BOOST_AUTO_TEST_SUITE_END()
