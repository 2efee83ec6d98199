// SPDX-License-Identifier: BSD-3-Clause
// Boost.Test entry point for Hashi's unit tests; the cases live in the
// test_*.cpp files next to this one.
#define BOOST_TEST_MODULE hashi_unit
#include <boost/test/unit_test.hpp>
