# SPDX-License-Identifier: BSD-3-Clause
# relay: federation of clusters (relay/README.md). impi-server and the IMPI
# startup codec that mpiexec -client shares with it.

## The IMPI codec, authentication and server engine ##########################
noinst_LIBRARIES += libhashi_impi.a
libhashi_impi_a_SOURCES = \
	relay/impi/wire.cpp relay/impi/wire.hpp \
	relay/impi/startup_tables.cpp relay/impi/startup_tables.hpp \
	relay/impi/auth.cpp relay/impi/auth.hpp \
	relay/impi/channel.cpp relay/impi/channel.hpp \
	relay/impi/admission.cpp relay/impi/admission.hpp \
	relay/impi/log_limit.cpp relay/impi/log_limit.hpp \
	relay/impi/server.cpp relay/impi/server.hpp
libhashi_impi_a_CPPFLAGS = $(AM_CPPFLAGS) $(CRYPTO_CFLAGS)

## impi-server ###############################################################
bin_PROGRAMS += impi-server
impi_server_SOURCES = relay/impi_server_main.cpp
impi_server_LDADD = libhashi_impi.a $(CRYPTO_LIBS)

## Tests #####################################################################
check_PROGRAMS += tests/unit/impi-unit
tests_unit_impi_unit_SOURCES = \
	tests/unit/impi/main.cpp \
	tests/unit/impi/test_wire.cpp \
	tests/unit/impi/test_startup_tables.cpp \
	tests/unit/impi/test_auth.cpp \
	tests/unit/impi/test_client_side.cpp \
	tests/unit/impi/test_admission.cpp \
	tests/unit/impi/test_session.cpp
tests_unit_impi_unit_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) -DBOOST_TEST_DYN_LINK
tests_unit_impi_unit_LDADD = libhashi_mpiexec.a libhashi_impi.a libhashi_common.a $(CRYPTO_LIBS) \
	-lboost_unit_test_framework -lpthread
TESTS += tests/unit/impi-unit

TESTS += tests/integration/federation.sh
EXTRA_DIST += relay/README.md tests/integration/federation.sh
