// SPDX-License-Identifier: BSD-3-Clause
// Environment settings: unset and empty fall back, set values parse with
// number_text's forms and messages.
#include "common/environment.hpp"

#include <boost/test/unit_test.hpp>
#include <cstdlib>

using namespace hashi;

namespace {

// Sets (or unsets, for nullptr) one variable for the life of a test.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value) : name_(name)
    {
        if (value != nullptr)
            ::setenv(name, value, 1);
        else
            ::unsetenv(name);
    }
    ~ScopedEnv() { ::unsetenv(name_); }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    const char* name_;
};

constexpr const char* var = "HASHI_COMMON_UNIT_TEST";

} // namespace

BOOST_AUTO_TEST_SUITE(environment)

BOOST_AUTO_TEST_CASE(values_and_texts)
{
    {
        ScopedEnv e(var, nullptr);
        BOOST_TEST(!env_value(var).has_value());
        BOOST_TEST(!env_text(var).has_value());
    }
    {
        ScopedEnv e(var, "");
        BOOST_TEST(env_value(var).value().empty()); // set, though empty
        BOOST_TEST(!env_text(var).has_value()); // empty counts as unset
    }
    {
        ScopedEnv e(var, "eth1");
        BOOST_TEST(env_text(var).value() == "eth1");
    }
}

BOOST_AUTO_TEST_CASE(whole_numbers)
{
    std::string error;
    const WholeRange r {.lo = 5, .hi = 600, .unit = "seconds"};
    {
        ScopedEnv e(var, nullptr);
        BOOST_TEST(env_whole(var, 20, r, error).value() == 20u);
    }
    {
        ScopedEnv e(var, "");
        BOOST_TEST(env_whole(var, 20, r, error).value() == 20u);
    }
    {
        ScopedEnv e(var, "30");
        BOOST_TEST(env_whole(var, 20, r, error).value() == 30u);
    }
    {
        ScopedEnv e(var, "soon");
        BOOST_TEST(!env_whole(var, 20, r, error).has_value());
        BOOST_TEST(error == "HASHI_COMMON_UNIT_TEST='soon' is not a whole number from 5 to 600 seconds");
    }
}

BOOST_AUTO_TEST_CASE(switches)
{
    std::string error;
    {
        ScopedEnv e(var, nullptr);
        BOOST_TEST(env_switch(var, true, error).value());
    }
    {
        ScopedEnv e(var, "0");
        BOOST_TEST(!env_switch(var, true, error).value());
    }
    {
        ScopedEnv e(var, "perhaps");
        BOOST_TEST(!env_switch(var, true, error).has_value());
        BOOST_TEST(error.starts_with("HASHI_COMMON_UNIT_TEST='perhaps' is not on or off"));
    }
}

BOOST_AUTO_TEST_SUITE_END()
