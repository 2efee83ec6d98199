# SPDX-License-Identifier: BSD-3-Clause
# src/common: code that more than one part of Hashi uses, with one owner
# here instead of a copy in each: the descriptor handle, install paths,
# reading numbers and switches from flags and the environment, and the
# WAN-share record that libhashi-coll and the provider both read.

COMMON_PARSE_SOURCES = \
	src/common/number_text.cpp src/common/number_text.hpp \
	src/common/environment.cpp src/common/environment.hpp

## For programs (mpiexec, the wrappers, hashi-info, impi-server, ...) #######
noinst_LIBRARIES += libhashi_common.a
libhashi_common_a_SOURCES = \
	$(COMMON_PARSE_SOURCES) \
	src/common/install_paths.cpp src/common/install_paths.hpp \
	src/common/daemon_options.cpp src/common/daemon_options.hpp \
	src/common/unique_fd.hpp \
	src/common/abi/wan_share_abi.h

## For shared objects (libhashi-coll, libhashi-scash, the provider) #########
# PIC, and compiled with hidden visibility so that each shared object keeps
# its own copy inside and exports none of it: the provider exports only
# fi_prov_ini, the libraries only their APIs. Install paths are left out:
# they are found from the running program, which a library is not.
noinst_LTLIBRARIES += libhashi_common_pic.la
libhashi_common_pic_la_SOURCES = $(COMMON_PARSE_SOURCES)
libhashi_common_pic_la_CXXFLAGS = $(AM_CXXFLAGS) -fvisibility=hidden

## Unit tests (Boost.Test) ##################################################
check_PROGRAMS += tests/unit/common-unit
tests_unit_common_unit_SOURCES = \
	tests/unit/common/main.cpp \
	tests/unit/common/test_number_text.cpp \
	tests/unit/common/test_environment.cpp
tests_unit_common_unit_CPPFLAGS = $(AM_CPPFLAGS) -DBOOST_TEST_DYN_LINK
tests_unit_common_unit_LDADD = libhashi_common.a -lboost_unit_test_framework
TESTS += tests/unit/common-unit
