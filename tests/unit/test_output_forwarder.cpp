// SPDX-License-Identifier: BSD-3-Clause
#include "mpi/mpiexec/output_forwarder.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <boost/test/unit_test.hpp>

using namespace hashi::mpiexec;

namespace {

// Runs `body` with a forwarder writing into a pipe and returns what came out.
template <typename F> std::string captured(int rank, bool prefix, F body)
{
    std::array<int, 2> p {};
    BOOST_REQUIRE(::pipe(p.data()) == 0);
    // Everything is read after the forwarder is done, so the pipe must hold it all.
    BOOST_REQUIRE(::fcntl(p[1], F_SETPIPE_SZ, 1 << 20) > 0);
    {
        OutputForwarder fwd(p[1], rank, prefix);
        body(fwd);
    }
    ::close(p[1]);
    std::string out;
    std::array<char, 4096> buf {};
    ssize_t n = 0;
    while ((n = ::read(p[0], buf.data(), buf.size())) > 0) {
        out.append(buf.data(), static_cast<size_t>(n));
    }
    ::close(p[0]);
    return out;
}

} // namespace

BOOST_AUTO_TEST_SUITE(output_forwarder)

BOOST_AUTO_TEST_CASE(whole_lines_with_prefix)
{
    auto out = captured(3, true, [](OutputForwarder& f) {
        f.feed("hel");
        f.feed("lo\nwor");
        f.feed("ld\n\npartial");
        f.finish();
    });
    BOOST_TEST(out == "[3] hello\n[3] world\n[3] \n[3] partial\n");
}

BOOST_AUTO_TEST_CASE(raw_output_is_byte_exact)
{
    auto out = captured(0, false, [](OutputForwarder& f) {
        f.feed("a\nb");
        f.finish();
    });
    BOOST_TEST(out == "a\nb");
}

BOOST_AUTO_TEST_CASE(endless_line_is_flushed_in_pieces)
{
    std::string big(70000, 'x');
    auto out = captured(0, false, [&](OutputForwarder& f) {
        f.feed(big);
        f.finish();
    });
    BOOST_TEST(out.size() == big.size());
}

BOOST_AUTO_TEST_SUITE_END()
