# SPDX-License-Identifier: BSD-3-Clause
# testbed: emulated clusters from network namespaces on one machine
# (testbed/README.md). hashi-testbed builds and removes them; hashi-delayline
# gives the WAN links their delay, since the host kernel has no netem.

# bin_SCRIPTS (declared in Makefile.am) rather than dist_bin_SCRIPTS, which
# no fragment may start with '=' without clashing with another.
bin_SCRIPTS += testbed/hashi-testbed testbed/hashi-grid-run
EXTRA_DIST += testbed/hashi-testbed testbed/hashi-grid-run

bin_PROGRAMS += hashi-delayline
hashi_delayline_SOURCES = \
	testbed/delayline/main.cpp \
	testbed/delayline/options.cpp testbed/delayline/options.hpp \
	testbed/delayline/tap.cpp testbed/delayline/tap.hpp \
	testbed/delayline/frame_queue.cpp testbed/delayline/frame_queue.hpp \
	testbed/delayline/forwarder.cpp testbed/delayline/forwarder.hpp \
	testbed/delayline/stats_file.cpp testbed/delayline/stats_file.hpp \
	testbed/delayline/clock.hpp
hashi_delayline_LDADD = libhashi_common.a -lpthread

## Tests ####################################################################
check_PROGRAMS += testbed/delayline/frame-queue-test
testbed_delayline_frame_queue_test_SOURCES = \
	testbed/delayline/frame_queue_test.cpp \
	testbed/delayline/frame_queue.cpp testbed/delayline/frame_queue.hpp
testbed_delayline_frame_queue_test_CPPFLAGS = $(AM_CPPFLAGS) -DBOOST_TEST_DYN_LINK
testbed_delayline_frame_queue_test_LDADD = -lboost_unit_test_framework
TESTS += testbed/delayline/frame-queue-test

# Emulated clusters; needs root, skips otherwise.
TESTS += tests/wan/testbed.sh
EXTRA_DIST += tests/wan/testbed.sh testbed/README.md
