/* SPDX-License-Identifier: BSD-3-Clause */
/* A pacing hint reaches the socket: rank 0 gives a hint (argv[1]: info,
 * bad_info, matb, maxrate, psp_limit or none), sends to rank 1 in another cluster,
 * then reads TCP_INFO on every TCP socket of its own process and prints
 * the pacing limits it finds (tcpi_max_pacing_rate, bytes/s; sockets
 * without a limit are left out). The test compares them with the rate the
 * hint asks for.
 *
 * `split` (3 ranks: rank 0 in one cluster, 1 and 2 in the other): rank 0
 * sends 1 MiB to both at once and prints the limits while both are
 * sending (its share split over two sockets), then, once they are done,
 * sends to rank 1 alone and prints them again (that socket has the whole
 * share back). */
#include "yampi_psp.h"

#include <dirent.h>
#include <mpi.h>
#include <netinet/in.h>
#include <linux/tcp.h> /* the kernel's tcp_info: glibc's lacks tcpi_max_pacing_rate */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static void give_hint(const char* mode)
{
    if (strcmp(mode, "info") == 0) { /* 80 Mbit/s shared by 4: 2,500,000 B/s */
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "hashi_wan_rate", "80");
        MPI_Info_set(info, "hashi_wan_senders", "4");
        MPI_Comm_set_info(MPI_COMM_WORLD, info);
        MPI_Info_free(&info);
    } else if (strcmp(mode, "bad_info") == 0) { /* ignored with a warning */
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "hashi_wan_rate", "fast");
        MPI_Comm_set_info(MPI_COMM_WORLD, info);
        MPI_Info_free(&info);
    } else if (strcmp(mode, "matb") == 0) { /* 3,000,000 B/s */
        MPI_Comm_set_attr(MPI_COMM_WORLD, YAMPI_PSP_MATB, (void*)(intptr_t)3000);
    } else if (strcmp(mode, "maxrate") == 0) { /* 16,000 KB/s / HASHI_WAN_SENDERS */
        MPI_Attr_put(MPI_COMM_WORLD, YAMPI_PSP_MAXRATE, (void*)(intptr_t)16000);
    } else if (strcmp(mode, "psp_limit") == 0) { /* MAXRATE 12,000 KB/s / 3: 4,000,000 B/s */
        MPI_Comm_set_attr(MPI_COMM_WORLD, YAMPI_PSP_MAXRATE, (void*)(intptr_t)12000);
        psp_set_limit(MPI_COMM_WORLD, 3);
    }
}

static void print_socket_limits_as(const char* label)
{
    DIR* d = opendir("/proc/self/fd");
    struct dirent* e;
    printf("pace_hint: %slimits:", label);
    while (d != NULL && (e = readdir(d)) != NULL) {
        const int fd = atoi(e->d_name);
        int type = 0, proto = 0;
        socklen_t len = sizeof type;
        if (e->d_name[0] == '.' || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM)
            continue;
        len = sizeof proto;
        if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &len) != 0 || proto != IPPROTO_TCP)
            continue;
        struct tcp_info ti;
        memset(&ti, 0, sizeof ti);
        len = sizeof ti;
        if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 || ti.tcpi_state != 1 /* TCP_ESTABLISHED */)
            continue;
        if (ti.tcpi_max_pacing_rate != ~(uint64_t)0)
            printf(" %llu", (unsigned long long)ti.tcpi_max_pacing_rate);
    }
    printf("\n");
    if (d != NULL)
        closedir(d);
}

static void print_socket_limits(void)
{
    print_socket_limits_as("");
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int split(int rank)
{
    static char big[2][1 << 20];
    if (rank == 0) {
        MPI_Request r[2];
        MPI_Isend(big[0], sizeof big[0], MPI_BYTE, 1, 0, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(big[1], sizeof big[1], MPI_BYTE, 2, 0, MPI_COMM_WORLD, &r[1]);
        /* Progress for 0.3 s: both transfers are under way (at the test's
         * rate each takes seconds). */
        int done = 0;
        for (const double end = now_s() + 0.3; now_s() < end;)
            MPI_Testall(2, r, &done, MPI_STATUSES_IGNORE);
        if (done) {
            fprintf(stderr, "pace_hint: split: the transfers ended within 0.3 s: the rate was not limited\n");
            return 1;
        }
        print_socket_limits_as("both sending: ");
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        /* Rank 2's socket stops counting once its bytes have left. */
        sleep(1);
        /* The answer says the message left (a send may be held back to
         * coalesce with the next). */
        MPI_Send(big[0], 1 << 16, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        MPI_Recv(big[0], 1, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        print_socket_limits_as("one sending: ");
    } else {
        MPI_Recv(big[0], sizeof big[0], MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rank == 1) {
            MPI_Recv(big[0], 1 << 16, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(big[0], 1, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        }
    }
    fflush(stdout);
    return 0;
}

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc == 2 && strcmp(argv[1], "split") == 0 && size == 3) {
        const int rc = split(rank);
        if (rc != 0)
            MPI_Abort(MPI_COMM_WORLD, rc);
        MPI_Finalize();
        return 0;
    }
    if (size != 2 || argc != 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 pace_hint info|matb|maxrate|psp_limit|none (one rank per cluster), "
                            "or -n 3 pace_hint split (rank 0 in one cluster, 1 and 2 in the other)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    static char buf[1 << 16];
    if (rank == 0) {
        give_hint(argv[1]);
        /* The rate is applied when the path next writes. */
        MPI_Send(buf, sizeof buf, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(buf, 1, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        print_socket_limits();
        fflush(stdout);
    } else {
        MPI_Recv(buf, sizeof buf, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, 1, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
