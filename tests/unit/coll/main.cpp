// SPDX-License-Identifier: BSD-3-Clause
#define BOOST_TEST_MODULE hashi collectives unit tests
#include <boost/test/unit_test.hpp>
