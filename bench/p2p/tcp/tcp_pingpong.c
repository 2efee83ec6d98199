/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tcp_pingpong.c - hashi-tcp-pingpong, the limit for MPI latency on a path:
 * a ping-pong of raw TCP between two processes, with no MPI and no
 * libfabric in between.
 *
 *   hashi-tcp-pingpong [--quick] [--max-size BYTES] [--batches N] [--block]
 *
 * The process forks: the child listens on 127.0.0.1 (an ephemeral port),
 * the parent connects and measures.  Both read with MSG_DONTWAIT in a loop
 * (spinning, as an MPI progress engine polls) unless --block is given.
 * TCP_NODELAY on both ends.  The sizes, iterations, warm-up and batches are
 * those of hashi-p2p's latency benchmark, and the output is in its format
 *   latency SIZE_BYTES ITERATIONS VALUE us
 * so that run-p2p reads it as one more peer's column.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { MiB = 1 << 20 };

static int blocking;

static void die(const char* what)
{
    fprintf(stderr, "hashi-tcp-pingpong: %s: %s\n", what, strerror(errno));
    exit(1);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void send_all(int fd, const char* buf, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            die("send");
        }
        buf += n;
        len -= (size_t)n;
    }
}

/* Returns 0, or -1 when the peer closed the connection. */
static int recv_all(int fd, char* buf, size_t len)
{
    int flags = blocking ? 0 : MSG_DONTWAIT;
    while (len > 0) {
        ssize_t n = recv(fd, buf, len, flags);
        if (n == 0)
            return -1;
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            die("recv");
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* A message is its 8-byte length, then the payload: the echo side learns the
 * size from the stream, as a provider does from its frame header. */
static void ping(int fd, char* buf, size_t size)
{
    memcpy(buf, &size, sizeof size);
    send_all(fd, buf, sizeof size + size);
    if (recv_all(fd, buf, sizeof size + size) < 0) {
        fprintf(stderr, "hashi-tcp-pingpong: the echo process closed the connection\n");
        exit(1);
    }
}

static void echo(int fd, char* buf, size_t max)
{
    for (;;) {
        size_t size;
        if (recv_all(fd, (char*)&size, sizeof size) < 0)
            return;
        if (size > max) {
            fprintf(stderr, "hashi-tcp-pingpong: echo: message of %zu bytes beyond the largest %zu\n", size, max);
            exit(1);
        }
        memcpy(buf, &size, sizeof size);
        if (recv_all(fd, buf + sizeof size, size) < 0)
            return;
        send_all(fd, buf, sizeof size + size);
    }
}

static void nodelay(int fd)
{
    int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0)
        die("setsockopt TCP_NODELAY");
}

/* The same iteration counts as hashi-p2p's latency benchmark (p2p_main.c). */
static long iterations(int quick, size_t size)
{
    long base = quick ? 200 : 2000, floor = quick ? 2 : 10;
    long n = size <= 8192 ? base : (long)((double)base * 8192.0 / (double)size);
    return n > floor ? n : floor;
}

static long parse(const char* opt, const char* text, long min, long max)
{
    char* end = NULL;
    errno = 0;
    long v = text ? strtol(text, &end, 10) : 0;
    if (!text || errno || *end || end == text || v < min || v > max) {
        fprintf(stderr, "hashi-tcp-pingpong: %s needs a whole number from %ld to %ld, got '%s'\n", opt, min, max,
            text ? text : "");
        exit(2);
    }
    return v;
}

int main(int argc, char** argv)
{
    int quick = 0;
    long max = 4 * MiB, batches = 3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--block"))
            blocking = 1;
        else if (!strcmp(argv[i], "--max-size"))
            max = parse("--max-size", i + 1 < argc ? argv[++i] : NULL, 1, 1L << 30);
        else if (!strcmp(argv[i], "--batches"))
            batches = parse("--batches", i + 1 < argc ? argv[++i] : NULL, 1, 100);
        else {
            fprintf(stderr,
                "usage: hashi-tcp-pingpong [--quick] [--max-size BYTES] [--batches N] [--block]\n"
                "hashi-tcp-pingpong: unknown option '%s'\n",
                argv[i]);
            return 2;
        }
    }
    char* buf = malloc(sizeof(size_t) + (size_t)max);
    if (!buf)
        die("malloc");
    memset(buf, 'h', sizeof(size_t) + (size_t)max);

    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t alen = sizeof addr;
    if (lfd < 0 || bind(lfd, (struct sockaddr*)&addr, sizeof addr) < 0 || listen(lfd, 1) < 0
        || getsockname(lfd, (struct sockaddr*)&addr, &alen) < 0)
        die("listen on 127.0.0.1");
    pid_t child = fork();
    if (child < 0)
        die("fork");
    if (child == 0) {
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0)
            die("accept");
        nodelay(fd);
        echo(fd, buf, (size_t)max);
        _exit(0);
    }
    close(lfd);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr*)&addr, sizeof addr) < 0)
        die("connect to the echo process");
    nodelay(fd);

    printf("# library: raw TCP over 127.0.0.1, %s receives, TCP_NODELAY\n", blocking ? "blocking" : "spinning");
    printf("# nodes: rank0=localhost rank1=localhost\n");
    printf("# value: from the fastest of %ld batches; iterations: per batch\n", batches);
    printf("# columns: benchmark size_bytes iterations value unit\n");
    fflush(stdout);
    int first = 1;
    for (size_t size = 0;;) {
        long iters = iterations(quick, size);
        long warm = iters / 10 < 1 ? 1 : iters / 10 > 100 ? 100 : iters / 10;
        for (long k = 0; k < warm + (first ? 10 : 0); k++)
            ping(fd, buf, size);
        long per_batch = iters / batches > 0 ? iters / batches : 1;
        double best = 0;
        for (long b = 0; b < batches; b++) {
            double t0 = now();
            for (long k = 0; k < per_batch; k++)
                ping(fd, buf, size);
            double t = now() - t0;
            if (b == 0 || t < best)
                best = t;
        }
        printf("latency %zu %ld %.4f us\n", size, per_batch, best * 1e6 / (2.0 * (double)per_batch));
        fflush(stdout);
        first = 0;
        if (size >= (size_t)max)
            break;
        size_t next = size == 0 ? 1 : size * (quick ? 8 : 2);
        size = next < (size_t)max ? next : (size_t)max;
    }
    printf("# end\n");
    fflush(stdout);
    close(fd);
    int status = 0;
    waitpid(child, &status, 0);
    free(buf);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
