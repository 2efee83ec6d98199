// SPDX-License-Identifier: BSD-3-Clause
// Boost.Test entry point for the provider's matching engine; a program of
// its own so that the provider's pieces test without the MPI parts.
#define BOOST_TEST_MODULE hashi_match
#include <boost/test/unit_test.hpp>
