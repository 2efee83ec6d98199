// SPDX-License-Identifier: BSD-3-Clause
#include "mpi/mpiexec/hostfile.hpp"

#include <boost/test/unit_test.hpp>

using namespace hashi::mpiexec;

BOOST_AUTO_TEST_SUITE(hostfile)

BOOST_AUTO_TEST_CASE(host_list_with_and_without_slots)
{
    auto h = parse_host_list("a,b:4, c.example.org:2");
    BOOST_REQUIRE_EQUAL(h.size(), 3U);
    BOOST_TEST((h[0] == HostSlots {"a", 1}));
    BOOST_TEST((h[1] == HostSlots {"b", 4}));
    BOOST_TEST((h[2] == HostSlots {"c.example.org", 2}));
}

BOOST_AUTO_TEST_CASE(host_list_errors_name_the_entry)
{
    auto fails_with = [](const char* list, const char* text) {
        try {
            parse_host_list(list);
        } catch (const HostListError& e) {
            BOOST_TEST_INFO(list << " -> " << e.what());
            BOOST_TEST(std::string(e.what()).find(text) != std::string::npos);
            return;
        }
        BOOST_ERROR(std::string("no error for ") + list);
    };
    fails_with("", "empty");
    fails_with("a,,b", "not a valid host name");
    fails_with("a:0", "is not a whole number from 1 to");
    fails_with("a:x", "is not a whole number");
    fails_with("a:", "empty");
    fails_with("a:3:4", "is not a whole number");
    fails_with("bad host", "not a valid host name");
    fails_with("a:99999999", "is not a whole number from 1 to 1048576");
}

BOOST_AUTO_TEST_CASE(hostfile_formats_and_comments)
{
    auto h = parse_hostfile("# cluster A\n"
                            "node0\n"
                            "node1:4   # four cores\n"
                            "\n"
                            "   node2 slots=2\n"
                            "node3",
        "hf");
    BOOST_REQUIRE_EQUAL(h.size(), 4U);
    BOOST_TEST((h[0] == HostSlots {"node0", 1}));
    BOOST_TEST((h[1] == HostSlots {"node1", 4}));
    BOOST_TEST((h[2] == HostSlots {"node2", 2}));
    BOOST_TEST((h[3] == HostSlots {"node3", 1}));
}

BOOST_AUTO_TEST_CASE(hostfile_errors_carry_file_and_line)
{
    auto message = [](const char* text) -> std::string {
        try {
            parse_hostfile(text, "hosts.txt");
        } catch (const HostListError& e) {
            return e.what();
        }
        return "no error";
    };
    BOOST_TEST(message("a\nb:zero\n") == "hosts.txt:2: slot count 'zero' is not a whole number from 1 to 1048576");
    BOOST_TEST(message("a\n\nb slots=0\n") == "hosts.txt:3: slot count '0' is not a whole number from 1 to 1048576");
    BOOST_TEST(message("a extra\n") == "hosts.txt:1: unexpected 'extra' (expected 'host', 'host:N' or 'host slots=N')");
    BOOST_TEST(message("a:2 slots=3\n") == "hosts.txt:1: slots given twice (host:N and slots=N)");
    BOOST_TEST(message("# only a comment\n\n") == "hosts.txt: no hosts listed");
    BOOST_TEST(message("no$pe\n") == "hosts.txt:1: 'no$pe' is not a valid host name");
}

BOOST_AUTO_TEST_CASE(missing_hostfile)
{
    BOOST_CHECK_EXCEPTION(read_hostfile("/nonexistent/hosts"), HostListError,
        [](const HostListError& e) { return std::string(e.what()) == "cannot read hostfile '/nonexistent/hosts'"; });
}

BOOST_AUTO_TEST_SUITE_END()
