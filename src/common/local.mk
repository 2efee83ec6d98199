# SPDX-License-Identifier: BSD-3-Clause
# src/common: code that more than one part of Hashi uses, with one owner
# here instead of a copy in each: the descriptor handle, install paths,
# and the WAN-share record that libhashi-coll and the provider both read.

## For programs (mpiexec, the wrappers, hashi-info, impi-server, ...) #######
noinst_LIBRARIES += libhashi_common.a
libhashi_common_a_SOURCES = \
	src/common/install_paths.cpp src/common/install_paths.hpp \
	src/common/unique_fd.hpp \
	src/common/abi/wan_share_abi.h
