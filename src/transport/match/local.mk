# SPDX-License-Identifier: BSD-3-Clause
# src/transport/match: the provider's tag matching (match_backend.hpp), the
# user-space engine, the test-vector reader, and their unit tests.

# Linked into the provider's shared library, hence -fPIC.
noinst_LIBRARIES += libhashi_match.a
libhashi_match_a_SOURCES = \
	src/transport/match/match_backend.hpp \
	src/transport/match/match_engine.cpp src/transport/match/match_engine.hpp \
	src/transport/match/match_vectors.cpp src/transport/match/match_vectors.hpp
libhashi_match_a_CXXFLAGS = $(AM_CXXFLAGS) -fPIC

check_PROGRAMS += tests/unit/match-unit
tests_unit_match_unit_SOURCES = \
	tests/unit/match/main.cpp \
	tests/unit/match/test_match_engine.cpp
tests_unit_match_unit_CPPFLAGS = $(AM_CPPFLAGS) -DBOOST_TEST_DYN_LINK -DHASHI_TEST_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_match_unit_LDADD = libhashi_match.a -lboost_unit_test_framework
TESTS += tests/unit/match-unit
EXTRA_DIST += tests/unit/data/match-vectors.txt
