# SPDX-License-Identifier: BSD-3-Clause
# Benchmarks (bench/README.md).  Nothing is built here: bench/p2p/run-p2p
# compiles the benchmarks with the installed mpicc of each MPI it compares.

P2P_BENCH_FILES = \
	bench/README.md \
	bench/p2p/run-p2p \
	bench/p2p/p2p_report.py \
	bench/p2p/p2p.h \
	bench/p2p/p2p_main.c \
	bench/p2p/p2p_latency.c \
	bench/p2p/p2p_stream.c \
	bench/p2p/p2p_exchange.c \
	bench/p2p/tcp/tcp_pingpong.c

FFT_BENCH_FILES = bench/fft/run-fft bench/fft/fft_alltoall.c bench/fft/smoke.sh

CONNECT_BENCH_FILES = bench/connect/run-connect bench/connect/connect.c

IDLE_BENCH_FILES = bench/idle/run-crowded bench/idle/crowded.c bench/idle/smoke.sh

# A quick run of the runner on the sockets provider (a few seconds).
TESTS += bench/p2p/smoke.sh
# One quick round of the on-node alltoall benchmark, Hashi alone (seconds).
TESTS += bench/fft/smoke.sh
# One quick round of a job with twice as many ranks as CPUs (seconds).
TESTS += bench/idle/smoke.sh
EXTRA_DIST += $(P2P_BENCH_FILES) $(FFT_BENCH_FILES) $(CONNECT_BENCH_FILES) $(IDLE_BENCH_FILES) bench/p2p/smoke.sh
EXTRA_DIST += bench/relay/run-relay bench/relay/README.md bench/relay/run-trunks bench/relay/trunk_load.c \
	bench/relay/run-trunk-loss bench/relay/run-trunk-share bench/relay/stage.sh
EXTRA_DIST += bench/wan/run-wan bench/wan/wan-kernels.c bench/wan/README.md
