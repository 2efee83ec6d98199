// SPDX-License-Identifier: BSD-3-Clause
// Jobs that cannot fit are refused up front, with what to do instead.
#include "mpi/mpiexec/capacity.hpp"

#include <boost/test/unit_test.hpp>

using namespace hashi::mpiexec;

BOOST_AUTO_TEST_SUITE(capacity)

BOOST_AUTO_TEST_CASE(refuses_far_more_processes_than_cpus_unless_asked)
{
    Options o;
    rlimit fds {1 << 20, 1 << 20};
    BOOST_TEST(!capacity_problem(o, 128, 2, fds));
    auto p = capacity_problem(o, 129, 2, fds);
    BOOST_REQUIRE(p);
    BOOST_TEST(p->find("-oversubscribe") != std::string::npos);
    o.oversubscribe = true;
    BOOST_TEST(!capacity_problem(o, 129, 2, fds));
    // ssh runs the programs on other hosts.
    o.oversubscribe = false;
    o.launcher = LauncherKind::ssh;
    BOOST_TEST(!capacity_problem(o, 129, 2, fds));
}

BOOST_AUTO_TEST_CASE(refuses_what_the_descriptor_limit_cannot_hold)
{
    Options o;
    o.oversubscribe = true;
    rlimit fds {1024, 4096};
    int fits = static_cast<int>((1024 - descriptor_reserve) / descriptors_per_process(o.launcher));
    BOOST_TEST(!capacity_problem(o, fits, 2, fds));
    auto p = capacity_problem(o, fits + 1, 2, fds);
    BOOST_REQUIRE(p);
    BOOST_TEST(p->find("ulimit -n") != std::string::npos);
    BOOST_TEST(p->find("limit of 1024 (hard limit 4096)") != std::string::npos);
    rlimit unlimited {RLIM_INFINITY, RLIM_INFINITY};
    BOOST_TEST(!capacity_problem(o, 100000, 2, unlimited));
}

BOOST_AUTO_TEST_SUITE_END()
