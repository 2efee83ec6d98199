// SPDX-License-Identifier: BSD-3-Clause
// Boost.Test entry point for the unit tests of src/common.
#define BOOST_TEST_MODULE common_unit
#include <boost/test/unit_test.hpp>
