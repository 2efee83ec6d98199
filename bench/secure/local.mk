# SPDX-License-Identifier: BSD-3-Clause
# What each protection of src/transport/secure costs (bench/secure/README.md).
# Built by the tree (it needs no MPI, only the streams); run-secure runs it.

noinst_PROGRAMS += bench/secure/hashi-secure-bench
bench_secure_hashi_secure_bench_SOURCES = bench/secure/secure_bench.cpp tests/transport/loopback_pair.hpp $(SECURE_SOURCES)
bench_secure_hashi_secure_bench_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) $(CRYPTO_CFLAGS) $(SSL_CFLAGS)
bench_secure_hashi_secure_bench_LDADD = $(SSL_LIBS) $(CRYPTO_LIBS) -lpthread
EXTRA_DIST += bench/secure/run-secure bench/secure/README.md

# A quick run of the runner (a few seconds).
TESTS += bench/secure/smoke.sh
EXTRA_DIST += bench/secure/smoke.sh
