// SPDX-License-Identifier: BSD-3-Clause
// What mpiexec sends an ssh shim on stdin: decoded exactly as encoded,
// nothing read past its end (that is rank 0's stdin), and bad input
// refused with a reason instead of a crash or an unbounded allocation.
#include "mpi/mpiexec/shim_handoff.hpp"

#include <boost/test/unit_test.hpp>

#include <cstring>

using namespace hashi::mpiexec;

namespace {

// A ReadExact over a string that records how far it was read.
struct StringSource {
    std::string data;
    std::size_t pos = 0;
    ReadExact reader()
    {
        return [this](char* buf, std::size_t n) {
            if (data.size() - pos < n) {
                pos = data.size();
                return false;
            }
            std::memcpy(buf, data.data() + pos, n);
            pos += n;
            return true;
        };
    }
};

} // namespace

BOOST_AUTO_TEST_SUITE(shim_handoff)

BOOST_AUTO_TEST_CASE(round_trip_stops_at_end)
{
    ShimHandoff h;
    h.token = random_secret();
    h.env = {{"HASHI_JOB_KEY", std::string(64, 'a')}, {"G", "a b\nc=d"}, {"EMPTY", ""}};
    StringSource src {encode_handoff(h) + "rank 0's stdin\n"};
    std::string why;
    auto got = decode_handoff(src.reader(), why);
    BOOST_REQUIRE_MESSAGE(got, why);
    BOOST_TEST(got->token == h.token);
    BOOST_TEST(got->env == h.env);
    BOOST_TEST(src.data.substr(src.pos) == "rank 0's stdin\n");
}

BOOST_AUTO_TEST_CASE(bad_input_is_refused)
{
    auto token_line = "token " + to_hex(random_secret()) + "\n";
    const std::string inputs[] = {
        "",
        "some user input\n",
        "hashi-shim v1\nend\n", // no token
        "hashi-shim v1\ntoken 12\nend\n",
        "hashi-shim v1\n" + token_line, // no end
        "hashi-shim v1\n" + token_line + "env 5\nA=b\nend\n", // length does not match
        "hashi-shim v1\n" + token_line + "env 3\n=ab\nend\n",
        "hashi-shim v1\n" + token_line + "env 99999999999\n",
        "hashi-shim v1\n" + token_line + "env -1\n",
        "hashi-shim v1\n" + token_line + "other\nend\n",
        "hashi-shim v1\n" + std::string(100000, 'x'),
    };
    for (const auto& in : inputs) {
        StringSource src {in};
        std::string why;
        BOOST_TEST(!decode_handoff(src.reader(), why), in.substr(0, 40));
        BOOST_TEST(!why.empty());
    }
}

BOOST_AUTO_TEST_SUITE_END()
