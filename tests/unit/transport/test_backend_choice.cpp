// SPDX-License-Identifier: BSD-3-Clause
// FI_HASHI_RECV (src/transport/recv/backend_choice.hpp) and opening the o2g
// device (recv/o2g_device.hpp) where the module is missing: the host has
// no /dev/o2g, so what is checked here is every refusal's message and the
// choice itself, against real files; the kernel backend proper runs in the
// VM (tests/kmod).
#include "transport/recv/backend_choice.hpp"
#include "transport/recv/o2g_device.hpp"

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <unistd.h>

using namespace hashi::fi;

namespace {

struct env_recv {
    explicit env_recv(const char* v)
    {
        if (v != nullptr)
            ::setenv("FI_HASHI_RECV", v, 1);
        else
            ::unsetenv("FI_HASHI_RECV");
    }
    ~env_recv() { ::unsetenv("FI_HASHI_RECV"); }
};

// A file that stands where a device would be (only its existence is asked).
struct present_file {
    std::string path = "/tmp/hashi-test-o2g-" + std::to_string(::getpid());
    present_file() { std::ofstream(path) << "not a device\n"; }
    ~present_file() { ::unlink(path.c_str()); }
};

const char* const missing = "/nonexistent/o2g";

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

} // namespace

BOOST_AUTO_TEST_SUITE(backend_choice)

BOOST_AUTO_TEST_CASE(user_is_the_default_even_with_the_device)
{
    std::string err;
    present_file dev;
    env_recv unset(nullptr);
    BOOST_TEST((recv_backend_from_environment(true, err, dev.path.c_str()) == recv_backend_kind::user));
    BOOST_TEST(err.empty());
}

BOOST_AUTO_TEST_CASE(auto_follows_the_device)
{
    std::string err;
    present_file dev;
    env_recv choice("auto");
    BOOST_TEST((recv_backend_from_environment(true, err, missing) == recv_backend_kind::user));
    BOOST_TEST((recv_backend_from_environment(true, err, dev.path.c_str()) == recv_backend_kind::kernel_if_it_opens));
    // Relayed or protected streams: the module cannot read them.
    BOOST_TEST((recv_backend_from_environment(false, err, dev.path.c_str()) == recv_backend_kind::user));
    BOOST_TEST(err.empty());
}

BOOST_AUTO_TEST_CASE(user_is_always_user)
{
    std::string err;
    present_file dev;
    env_recv user("user");
    BOOST_TEST((recv_backend_from_environment(true, err, dev.path.c_str()) == recv_backend_kind::user));
}

BOOST_AUTO_TEST_CASE(kernel_without_the_device_says_what_to_do)
{
    std::string err;
    env_recv kernel("kernel");
    BOOST_TEST(!recv_backend_from_environment(true, err, missing));
    BOOST_TEST(contains(err, missing));
    BOOST_TEST(contains(err, "modprobe o2g"));
    BOOST_TEST(contains(err, "FI_HASHI_RECV=user"));
}

BOOST_AUTO_TEST_CASE(kernel_with_the_device)
{
    std::string err;
    present_file dev;
    env_recv kernel("kernel");
    BOOST_TEST((recv_backend_from_environment(true, err, dev.path.c_str()) == recv_backend_kind::kernel));
    BOOST_TEST(!recv_backend_from_environment(false, err, dev.path.c_str()));
    BOOST_TEST(contains(err, "plain TCP only"));
}

BOOST_AUTO_TEST_CASE(anything_else_is_refused_by_name)
{
    std::string err;
    env_recv bad("kernal");
    BOOST_TEST(!recv_backend_from_environment(true, err, missing));
    BOOST_TEST(contains(err, "FI_HASHI_RECV=kernal"));
    BOOST_TEST(contains(err, "user, kernel or auto"));
}

BOOST_AUTO_TEST_CASE(opening_a_missing_or_wrong_device_explains)
{
    try {
        o2g_device d(missing);
        BOOST_FAIL("opened a device that does not exist");
    } catch (const std::runtime_error& e) {
        BOOST_TEST(contains(e.what(), "modprobe o2g"));
    }
    present_file notdev;
    try {
        o2g_device d(notdev.path.c_str());
        BOOST_FAIL("took a plain file for the o2g device");
    } catch (const std::runtime_error& e) {
        BOOST_TEST(contains(e.what(), "is not an o2g device"));
        BOOST_TEST(contains(e.what(), "hashi-o2g-dkms"));
    }
}

BOOST_AUTO_TEST_SUITE_END()
