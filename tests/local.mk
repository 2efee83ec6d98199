# SPDX-License-Identifier: BSD-3-Clause
# make check: unit tests of our own code, then integration tests that run
# real jobs with the real MPICH, against a staged install (make install
# DESTDIR=tests/stage) so the installed layout is what gets tested.

STAGE_DIR = $(abs_top_builddir)/tests/stage
check_DATA += tests/stage.stamp
CLEANFILES += tests/stage.stamp

tests/stage.stamp: $(bin_PROGRAMS) $(hashifi_LTLIBRARIES) $(MPICH_STAMP) FORCE
	@echo "  STAGE    make install DESTDIR=tests/stage"
	@rm -rf "$(STAGE_DIR)"
	@$(MAKE) $(AM_MAKEFLAGS) install DESTDIR="$(STAGE_DIR)" >/dev/null
	@touch $@
FORCE:
.PHONY: FORCE

# The test programs alone, without running anything: scripts/run-tests
# builds them with make -jN first (make check builds them one at a time).
check-programs: $(check_PROGRAMS)
.PHONY: check-programs

clean-local:
	rm -rf "$(STAGE_DIR)" tests/work

AM_TESTS_ENVIRONMENT = \
	HASHI_PREFIX='$(STAGE_DIR)$(prefix)'; export HASHI_PREFIX; \
	HASHI_MPICH_SOURCE='$(MPICH_LINK)/source'; export HASHI_MPICH_SOURCE; \
	HASHI_SRCDIR='$(abs_top_srcdir)'; export HASHI_SRCDIR; \
	HASHI_BUILDDIR='$(abs_top_builddir)'; export HASHI_BUILDDIR; \
	HASHI_ASAN_RUNTIME='$(HASHI_ASAN_RUNTIME)'; export HASHI_ASAN_RUNTIME; \
	HASHI_TEST_WORK='$(abs_top_builddir)/tests/work'; export HASHI_TEST_WORK; \
	HASHI_CONFORMANCE_WORKDIR='$(abs_top_builddir)/tests/work/conformance'; export HASHI_CONFORMANCE_WORKDIR;

## The longest tests first #################################################
# make check runs TESTS in this order, one at a time (scripts/run-tests: the
# testbed's checks measure its delay lines); a make check -jN (the
# instrumented pass, or by hand) starts the longest first and fills the
# other slots with the short ones.
# Every test keeps its own work directory, ports and testbed instance.
# MPICH's own test suite (its tests run two at a time, see
# tests/conformance/README.md), then the liveness scenarios (one of them an
# idle job of two minutes, mostly waiting).
TESTS += tests/conformance/run-conformance tests/wan/liveness.sh
EXTRA_DIST += tests/conformance

## Unit tests (Boost.Test) ##################################################
check_PROGRAMS += tests/unit/hashi-unit
tests_unit_hashi_unit_SOURCES = \
	tests/unit/main.cpp \
	tests/unit/test_hostfile.cpp \
	tests/unit/test_slurm_allocation.cpp \
	tests/unit/test_options.cpp \
	tests/unit/test_pmi_wire.cpp \
	tests/unit/test_pmi_server.cpp \
	tests/unit/test_pmi_auth.cpp \
	tests/unit/test_shim_handoff.cpp \
	tests/unit/test_capacity.cpp \
	tests/unit/test_placement.cpp \
	tests/unit/test_binding.cpp \
	tests/unit/test_launcher.cpp \
	tests/unit/test_output_forwarder.cpp \
	tests/unit/test_wrapper_args.cpp
tests_unit_hashi_unit_CPPFLAGS = $(AM_CPPFLAGS) -DBOOST_TEST_DYN_LINK -DHASHI_TEST_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_hashi_unit_LDADD = libhashi_mpiexec.a libhashi_impi_proto.a libhashi_wrapper.a libhashi_common.a $(CRYPTO_LIBS) $(HWLOC_LIBS) \
	-lboost_unit_test_framework
TESTS += tests/unit/hashi-unit

## Integration tests: real jobs under our mpiexec ###########################
INTEGRATION_TESTS = \
	tests/integration/wrappers.sh \
	tests/integration/examples.sh \
	tests/integration/mpiexec-errors.sh \
	tests/integration/mpiexec-features.sh \
	tests/integration/mpiexec-binding.sh \
	tests/integration/hashi-info.sh \
	tests/integration/stats-watch.sh \
	tests/integration/man-pages.sh \
	tests/integration/pkg-config.sh \
	tests/integration/ssh-launcher.sh \
	tests/integration/slurm-launcher.sh \
	tests/integration/debian-packages.sh
TESTS += $(INTEGRATION_TESTS)
EXTRA_DIST += $(INTEGRATION_TESTS) tests/integration/lib.sh tests/integration/programs tests/unit/data

## Emulated grid: a federated job across two testbed clusters (root) ######
# (liveness.sh is at the front of TESTS, see above)
TESTS += tests/wan/federation.sh
EXTRA_DIST += tests/wan/federation.sh tests/wan/liveness.sh
# Several gateways per cluster in strict mode (the testbed side of relays).
TESTS += tests/wan/gateways.sh
EXTRA_DIST += tests/wan/gateways.sh
# A congested WAN: bounded buffers that drop, random loss, cross traffic.
TESTS += tests/wan/congestion.sh
EXTRA_DIST += tests/wan/congestion.sh
# The hierarchical barrier releases both clusters together.
TESTS += tests/wan/barrier-skew.sh
EXTRA_DIST += tests/wan/barrier-skew.sh

## Attacks by a stranger on the network, with real processes and sockets ####
# (ranks' handshake and descriptors, mpiexec's PMI port, impi-server floods)
check_PROGRAMS += tests/security/hashi-intruder
tests_security_hashi_intruder_SOURCES = tests/security/intruder.cpp \
	src/transport/wire/frame.cpp src/transport/wire/handshake.cpp src/transport/address.cpp
tests_security_hashi_intruder_LDADD = libhashi_common.a
SECURITY_TESTS = tests/security/injection.sh tests/security/fd-flood.sh tests/security/pmi-hijack.sh \
	tests/security/impi-flood.sh
TESTS += $(SECURITY_TESTS)
EXTRA_DIST += $(SECURITY_TESTS) tests/security/lib-security.sh tests/security/stranger.py tests/security/watch_sockets.py tests/security/flood.py \
	tests/security/programs

## libFuzzer targets (bounded time) #########################################
TESTS += tests/fuzz/run-fuzz.sh
EXTRA_DIST += tests/fuzz


TEST_EXTENSIONS = .sh
SH_LOG_COMPILER = $(BASH)

## The o2g kernel module, in a VM (tests/kmod/local.mk) ######################
include $(top_srcdir)/tests/kmod/local.mk
