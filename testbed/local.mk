# SPDX-License-Identifier: BSD-3-Clause
# testbed: emulated clusters from network namespaces on one machine
# (testbed/README.md). hashi-testbed builds and removes them; hashi-delayline
# gives the WAN links their delay, since the host kernel has no netem.

# bin_SCRIPTS (declared in Makefile.am) rather than dist_bin_SCRIPTS, which
# no fragment may start with '=' without clashing with another.
bin_SCRIPTS += testbed/hashi-testbed
EXTRA_DIST += testbed/hashi-testbed

bin_PROGRAMS += hashi-delayline
hashi_delayline_SOURCES = \
	testbed/delayline/main.cpp \
	testbed/delayline/options.cpp testbed/delayline/options.hpp \
	testbed/delayline/tap.cpp testbed/delayline/tap.hpp \
	testbed/delayline/frame_queue.cpp testbed/delayline/frame_queue.hpp \
	testbed/delayline/forwarder.cpp testbed/delayline/forwarder.hpp \
	testbed/delayline/clock.hpp
hashi_delayline_LDADD = -lpthread

## Tests: emulated clusters (needs root) #####################################
TESTS += tests/wan/testbed.sh
EXTRA_DIST += tests/wan/testbed.sh testbed/README.md
