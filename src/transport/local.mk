# SPDX-License-Identifier: BSD-3-Clause
# src/transport: the `hashi` libfabric provider, a dlopen'ed module that
# libfabric finds through FI_PROVIDER_PATH (Hashi's mpiexec sets it to
# $(hashifidir)). libfabric only loads files named lib<name>-fi.so.

include src/transport/match/local.mk

hashifidir = $(libdir)/hashi/fi
hashifi_LTLIBRARIES = libhashi-fi.la
libhashi_fi_la_SOURCES = \
	src/transport/common.hpp \
	src/transport/provider.cpp \
	src/transport/diagnostics.cpp \
	src/transport/info.cpp src/transport/info.hpp \
	src/transport/address.cpp src/transport/address.hpp \
	src/transport/objects.hpp \
	src/transport/fabric.cpp \
	src/transport/eq.cpp \
	src/transport/domain.cpp \
	src/transport/av.cpp \
	src/transport/cq.cpp \
	src/transport/cntr.cpp \
	src/transport/mr.cpp \
	src/transport/region_check.cpp \
	src/transport/endpoint.cpp src/transport/endpoint.hpp \
	src/transport/ep_ops.cpp src/transport/ep_ops.hpp \
	src/transport/stats.cpp \
	src/transport/tcp_telemetry.cpp src/transport/tcp_telemetry.hpp \
	src/transport/tcp_congestion_control.cpp src/transport/tcp_congestion_control.hpp src/transport/send/payload_of_wire.hpp \
	src/transport/engine/engine.cpp src/transport/engine/engine.hpp \
	src/transport/engine/send_protocol.cpp \
	src/transport/engine/completions.cpp src/transport/engine/completions.hpp \
	src/transport/engine/operations.cpp src/transport/engine/operations.hpp \
	src/transport/engine/peer_table.cpp src/transport/engine/peer_table.hpp \
	src/transport/engine/router.cpp src/transport/engine/router.hpp \
	src/transport/engine/relay_set.cpp src/transport/engine/relay_set.hpp \
	src/transport/engine/progress.cpp src/transport/engine/progress.hpp \
	src/transport/engine/idle_wait.cpp src/transport/engine/idle_wait.hpp \
	src/transport/engine/machine_census.cpp src/transport/engine/machine_census.hpp \
	src/transport/engine/read_first.hpp \
	src/transport/engine/send_coalescing.cpp src/transport/engine/send_coalescing.hpp \
	src/transport/engine/held_flusher.cpp src/transport/engine/held_flusher.hpp \
	src/transport/domain_gate.cpp src/transport/domain_gate.hpp \
	src/transport/path/path.cpp src/transport/path/path.hpp \
	src/transport/path/path_manager.cpp src/transport/path/path_manager.hpp \
	src/transport/path/handshake.cpp \
	src/transport/path/relay_dial.cpp \
	src/transport/path/stream_parser.cpp src/transport/path/stream_parser.hpp \
	src/transport/path/reorder.cpp src/transport/path/reorder.hpp \
	src/transport/send/tx_frame.hpp \
	src/transport/send/send_scheduler.cpp src/transport/send/send_scheduler.hpp \
	src/transport/send/pacer.cpp src/transport/send/pacer.hpp \
	src/transport/send/sending_sockets.cpp src/transport/send/sending_sockets.hpp \
	src/transport/recv/receive_backend.hpp src/transport/recv/recv_op.hpp \
	src/transport/recv/user_backend.cpp src/transport/recv/user_backend.hpp \
	src/transport/recv/user_reader.cpp \
	src/transport/recv/backend_choice.cpp src/transport/recv/backend_choice.hpp \
	src/transport/recv/kernel_backend.cpp src/transport/recv/kernel_backend.hpp \
	src/transport/recv/o2g_device.cpp src/transport/recv/o2g_device.hpp \
	src/transport/engine/job_key.cpp src/transport/engine/job_key.hpp \
	src/transport/engine/log_limiter.cpp src/transport/engine/log_limiter.hpp \
	src/transport/engine/local_address.cpp src/transport/engine/local_address.hpp \
	src/transport/engine/wan_pacing.cpp src/transport/engine/wan_pacing.hpp src/common/abi/wan_share_abi.h \
	src/transport/wire/byte_order.hpp \
	src/transport/wire/frame.cpp src/transport/wire/frame.hpp \
	src/transport/wire/handshake.cpp src/transport/wire/handshake.hpp \
	src/transport/wire/relay_route.cpp src/transport/wire/relay_route.hpp \
	src/transport/engine/liveness.cpp src/transport/engine/liveness.hpp \
	src/transport/engine/peer_watch.cpp src/transport/engine/peer_watch.hpp \
	src/transport/engine/waiting.cpp \
	src/transport/wire/heartbeat.cpp src/transport/wire/heartbeat.hpp \
	src/transport/match/match_backend.hpp \
	src/transport/match/match_engine.cpp src/transport/match/match_engine.hpp
# kmod/include: the o2g module's user-facing header (uapi/o2g.h, BSD-licensed too).
libhashi_fi_la_CPPFLAGS = $(AM_CPPFLAGS) $(FABRIC_CFLAGS) $(CRYPTO_CFLAGS) -I$(top_srcdir)/kmod/include
# Only fi_prov_ini is exported; everything else stays inside the module.
libhashi_fi_la_CXXFLAGS = $(AM_CXXFLAGS) -fvisibility=hidden
libhashi_fi_la_LDFLAGS = -module -avoid-version -shared -no-undefined
libhashi_fi_la_LIBADD = libhashi_common_pic.la $(FABRIC_LIBS) $(CRYPTO_LIBS) -lpthread $(HASHI_SANITIZE_LIBS)

## Unit tests of the transport layers (Boost.Test) ##########################
check_PROGRAMS += tests/unit/transport-unit
tests_unit_transport_unit_SOURCES = \
	tests/unit/transport/main.cpp \
	tests/unit/transport/test_wire.cpp \
	tests/unit/transport/test_handshake.cpp \
	tests/unit/transport/test_relay_route.cpp \
	tests/unit/transport/test_relay_set.cpp \
	src/transport/wire/frame.cpp \
	src/transport/wire/handshake.cpp \
	src/transport/wire/relay_route.cpp \
	src/transport/engine/job_key.cpp \
	src/transport/engine/relay_set.cpp \
	src/transport/engine/router.cpp \
	tests/unit/transport/test_liveness.cpp \
	tests/unit/transport/test_liveness_relay.cpp \
	src/transport/engine/liveness.cpp \
	src/transport/diagnostics.cpp \
	tests/unit/transport/test_reorder.cpp \
	tests/unit/transport/test_idle_wait.cpp \
	tests/unit/transport/test_read_first.cpp \
	src/transport/engine/idle_wait.cpp \
	src/transport/engine/machine_census.cpp \
	tests/unit/transport/test_machine_census.cpp \
	tests/unit/transport/test_send_coalescing.cpp \
	src/transport/engine/send_coalescing.cpp \
	src/transport/engine/held_flusher.cpp \
	tests/unit/transport/test_held_flusher.cpp \
	tests/unit/transport/test_send_scheduler.cpp \
	src/transport/path/reorder.cpp \
	src/transport/send/send_scheduler.cpp \
	src/transport/send/pacer.cpp \
	tests/unit/transport/test_sending_sockets.cpp \
	src/transport/send/sending_sockets.cpp \
	src/transport/wire/heartbeat.cpp \
	src/transport/engine/peer_watch.cpp \
	src/transport/address.cpp \
	tests/unit/transport/test_backend_vectors.cpp \
	src/transport/recv/user_backend.cpp \
	src/transport/recv/user_reader.cpp \
	src/transport/engine/completions.cpp \
	src/transport/engine/operations.cpp \
	src/transport/engine/peer_table.cpp \
	src/transport/engine/progress.cpp \
	src/transport/engine/log_limiter.cpp \
	src/transport/path/path.cpp \
	src/transport/path/stream_parser.cpp \
	src/transport/region_check.cpp \
	tests/unit/transport/test_backend_choice.cpp \
	src/transport/recv/backend_choice.cpp \
	src/transport/recv/o2g_device.cpp
# The receive backend's test plays tests/unit/data/match-vectors.txt
# (HASHI_TEST_SRCDIR) through the backend, with the reader of libhashi_match.a.
tests_unit_transport_unit_CPPFLAGS = $(AM_CPPFLAGS) $(FABRIC_CFLAGS) $(CRYPTO_CFLAGS) -I$(top_srcdir)/kmod/include -DBOOST_TEST_DYN_LINK \
	-DHASHI_TEST_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_transport_unit_LDADD = libhashi_match.a libhashi_common.a $(FABRIC_LIBS) $(CRYPTO_LIBS) \
	-lboost_unit_test_framework
TESTS += tests/unit/transport-unit

## Robustness checks through the libfabric API (run by provider.sh) ##########
check_PROGRAMS += tests/transport/fi-robustness
tests_transport_fi_robustness_SOURCES = \
	tests/transport/fi_robustness.cpp \
	src/transport/wire/frame.cpp \
	src/transport/wire/handshake.cpp \
	src/transport/wire/relay_route.cpp \
	src/transport/engine/job_key.cpp \
	src/transport/wire/heartbeat.cpp \
	src/transport/address.cpp
tests_transport_fi_robustness_CPPFLAGS = $(AM_CPPFLAGS) $(FABRIC_CFLAGS) $(CRYPTO_CFLAGS)
tests_transport_fi_robustness_LDADD = $(FABRIC_LIBS) $(CRYPTO_LIBS)
TESTS += tests/integration/provider.sh
EXTRA_DIST += tests/integration/provider.sh
include src/transport/secure/local.mk
