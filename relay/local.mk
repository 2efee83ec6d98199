# SPDX-License-Identifier: BSD-3-Clause
# relay: federation of clusters (relay/README.md). The IMPI protocol library
# (relay/impi) that every IMPI speaker links, and impi-server (relay/server
# and its main).

## The IMPI protocol: what both ends of an IMPI connection need ##############
# The codec (frames, startup tables), the job's authentication and the
# framed control channel. impi-server, mpiexec -client and the coming
# impi-relay each link it; it knows nothing of who serves whom.
noinst_LIBRARIES += libhashi_impi_proto.a
libhashi_impi_proto_a_SOURCES = \
	relay/impi/wire.cpp relay/impi/wire.hpp \
	relay/impi/startup_tables.cpp relay/impi/startup_tables.hpp \
	relay/impi/auth.cpp relay/impi/auth.hpp \
	relay/impi/channel.cpp relay/impi/channel.hpp \
	relay/impi/relay_tables.cpp relay/impi/relay_tables.hpp
libhashi_impi_proto_a_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) $(CRYPTO_CFLAGS)

## impi-server's engine: admission of strangers and the rendezvous ##########
noinst_LIBRARIES += libhashi_impi_server.a
libhashi_impi_server_a_SOURCES = \
	relay/server/admission.cpp relay/server/admission.hpp \
	relay/server/log_limit.cpp relay/server/log_limit.hpp \
	relay/server/server.cpp relay/server/server.hpp
libhashi_impi_server_a_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) $(CRYPTO_CFLAGS)

## impi-server ###############################################################
bin_PROGRAMS += impi-server
impi_server_SOURCES = relay/impi_server_main.cpp
impi_server_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)
impi_server_LDADD = libhashi_impi_server.a libhashi_impi_proto.a libhashi_common.a $(CRYPTO_LIBS)

## Tests #####################################################################
check_PROGRAMS += tests/unit/impi-unit
tests_unit_impi_unit_SOURCES = \
	tests/unit/impi/main.cpp \
	tests/unit/impi/test_wire.cpp \
	tests/unit/impi/test_startup_tables.cpp \
	tests/unit/impi/test_auth.cpp \
	tests/unit/impi/test_client_side.cpp \
	tests/unit/impi/test_admission.cpp \
	tests/unit/impi/test_session.cpp \
	tests/unit/impi/test_relay_tables.cpp \
	tests/unit/impi/test_trunk_wire.cpp relay/relay/trunk_wire.cpp \
	tests/unit/impi/test_trunk_tuning.cpp relay/relay/trunk_tuning.cpp \
	tests/unit/impi/test_trunk_pacing.cpp relay/relay/trunk_pacing.cpp src/transport/send/sending_sockets.cpp \
	tests/unit/impi/test_trunk_queue.cpp relay/relay/trunk_queue.cpp \
	src/transport/tcp_telemetry.cpp src/transport/tcp_congestion_control.cpp
tests_unit_impi_unit_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) -DBOOST_TEST_DYN_LINK
tests_unit_impi_unit_LDADD = libhashi_mpiexec.a libhashi_impi_server.a libhashi_impi_proto.a libhashi_common.a $(CRYPTO_LIBS) \
	-lboost_unit_test_framework -lpthread
TESTS += tests/unit/impi-unit

TESTS += tests/integration/federation.sh
EXTRA_DIST += relay/README.md tests/integration/federation.sh

## impi-relay ################################################################
# The relay links the provider's codec of the route handshake, its job key
# and its protected streams (src/transport): the same bytes and MACs on
# both ends, compiled from the same sources.
bin_PROGRAMS += impi-relay
impi_relay_SOURCES = relay/impi_relay_main.cpp \
	relay/relay/relay.cpp relay/relay/relay.hpp \
	relay/relay/trunk.cpp relay/relay/route_stream.cpp relay/relay/lan_greeting.cpp \
	relay/relay/trunk_wire.cpp relay/relay/trunk_wire.hpp \
	relay/relay/trunk_tuning.cpp relay/relay/trunk_tuning.hpp \
	relay/relay/trunk_pacing.cpp relay/relay/trunk_pacing.hpp src/transport/send/sending_sockets.cpp \
	relay/relay/trunk_queue.cpp relay/relay/trunk_queue.hpp relay/relay/byte_buffer.hpp \
	relay/relay/event_loop.cpp relay/relay/event_loop.hpp \
	src/transport/address.cpp src/transport/engine/job_key.cpp \
	src/transport/wire/handshake.cpp src/transport/wire/heartbeat.cpp src/transport/wire/relay_route.cpp \
	src/transport/tcp_telemetry.cpp src/transport/tcp_congestion_control.cpp \
	$(SECURE_SOURCES)
impi_relay_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) $(CRYPTO_CFLAGS) $(SSL_CFLAGS)
impi_relay_LDADD = libhashi_mpiexec.a libhashi_impi_proto.a libhashi_common.a $(CRYPTO_LIBS) $(SSL_LIBS)

TESTS += tests/wan/relay.sh tests/wan/relay-conformance.sh tests/wan/trunk-share.sh
EXTRA_DIST += tests/wan/relay.sh tests/wan/relay-conformance.sh tests/wan/relay_stranger.py tests/wan/trunk-share.sh
