// SPDX-License-Identifier: BSD-3-Clause
// Boost.Test entry point for the IMPI codec and authentication tests
// (relay/impi); the cases live in the test_*.cpp files next to this one.
#define BOOST_TEST_MODULE impi_unit
#include <boost/test/unit_test.hpp>
