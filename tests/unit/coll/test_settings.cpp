// SPDX-License-Identifier: BSD-3-Clause
// The environment and parameter-file parsing of libhashi-coll: good values
// are taken, malformed ones are refused with a message naming the variable.
#include "link_params.hpp"
#include "settings.hpp"

#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>

using namespace hashi::coll;

namespace {
// Sets an environment variable for one test and restores it afterwards.
struct Env {
    std::string name;
    Env(const char* n, const char* v) : name(n) { setenv(n, v, 1); }
    ~Env() { unsetenv(name.c_str()); }
};

std::string error_of(void (*f)())
{
    try {
        f();
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "";
}
} // namespace

BOOST_AUTO_TEST_CASE(defaults_when_nothing_is_set)
{
    const Settings s = read_settings();
    BOOST_TEST(s.enabled);
    BOOST_TEST(s.verbose == 0);
    BOOST_TEST(!s.any_forced());
    BOOST_TEST(s.wan_senders == 0);
    BOOST_TEST(s.segment_bytes == 0u);
}

BOOST_AUTO_TEST_CASE(forcing_and_sizes_are_read)
{
    Env a("HASHI_COLL_ALLREDUCE", "lr_rab"), b("HASHI_COLL_BCAST", "mpich"), c("HASHI_COLL_SEGMENT", "64K"),
        d("HASHI_COLL_WAN_SENDERS", "3"), e("HASHI_COLL_VERBOSE", "2"), f("HASHI_COLL_BARRIER", "auto");
    const Settings s = read_settings();
    BOOST_TEST(s.forced[static_cast<int>(Collective::allreduce)] == "lr_rab");
    BOOST_TEST(s.forced[static_cast<int>(Collective::bcast)] == "mpich");
    BOOST_TEST(s.segment_bytes == 65536u);
    BOOST_TEST(s.wan_senders == 3);
    BOOST_TEST(s.verbose == 2);
    BOOST_TEST(s.any_forced());
}

BOOST_AUTO_TEST_CASE(malformed_values_name_the_variable)
{
    {
        Env a("HASHI_COLL_ALLREDUCE", "fastest");
        const auto msg = error_of([] { read_settings(); });
        BOOST_TEST(msg.find("HASHI_COLL_ALLREDUCE='fastest'") != std::string::npos);
        BOOST_TEST(msg.find("lr_lr_pipe") != std::string::npos); // lists what is accepted
    }
    {
        Env a("HASHI_COLL_BARRIER", "matsuda"); // an algorithm of another collective
        BOOST_TEST(error_of([] { read_settings(); }).find("HASHI_COLL_BARRIER") != std::string::npos);
    }
    for (const char* bad : {"-1", "12Q", "", "1e3", "99999999999999999999"}) {
        if (*bad == '\0')
            continue; // empty counts as unset
        Env a("HASHI_COLL_SEGMENT", bad);
        BOOST_TEST(error_of([] { read_settings(); }).find("HASHI_COLL_SEGMENT") != std::string::npos, bad);
    }
    {
        Env a("HASHI_COLL_SEGMENT", "8");
        BOOST_TEST(error_of([] { read_settings(); }).find("too small") != std::string::npos);
    }
    {
        Env a("HASHI_COLL_WAN_SENDERS", "0");
        BOOST_TEST(error_of([] { read_settings(); }).find("at least one") != std::string::npos);
    }
    {
        Env a("HASHI_COLL", "maybe");
        BOOST_TEST(error_of([] { read_settings(); }).find("on or off") != std::string::npos);
    }
    {
        Env a("HASHI_COLL_VERBOSE", "7");
        BOOST_TEST(error_of([] { read_settings(); }).find("HASHI_COLL_VERBOSE") != std::string::npos);
    }
}

BOOST_AUTO_TEST_CASE(parameter_files_round_trip_and_refuse_garbage)
{
    const std::string path = "coll-unit-params.txt";
    LinkParams p;
    p.node_rate = 200e6 / 8;
    p.wan_latency = 0.010;
    p.wan_rate = 2000e6 / 8;
    p.wan_flow_rate = 200e6 / 8;
    write_link_params(path, p);
    const LinkParams q = read_link_params(path, LinkParams {});
    BOOST_TEST(q.node_rate == p.node_rate, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(q.wan_latency == p.wan_latency, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(q.wan_senders() == 10);

    std::ofstream(path) << "# comment\nwan_latency_ms = 10\nnode_rate_mbit = fast\n";
    try {
        read_link_params(path, LinkParams {});
        BOOST_FAIL("a non-number was accepted");
    } catch (const std::runtime_error& e) {
        BOOST_TEST(
            std::string(e.what()).find(path + ":3: node_rate_mbit must be a positive number") != std::string::npos);
    }
    std::ofstream(path) << "wan_delay = 10\n";
    try {
        read_link_params(path, LinkParams {});
        BOOST_FAIL("an unknown key was accepted");
    } catch (const std::runtime_error& e) {
        BOOST_TEST(std::string(e.what()).find("unknown key 'wan_delay'") != std::string::npos);
    }
    BOOST_CHECK_THROW(read_link_params("/nonexistent/params", LinkParams {}), std::runtime_error);
    std::remove(path.c_str());
}
