/* SPDX-License-Identifier: BSD-3-Clause */
/* Home migration. Pages start cyclic (page i at process i % P) and page i
 * is written only by process (i + 1) % P, round after round: with
 * migration the home moves to the writer after `hysteresis` written
 * intervals, after which the writer sends no diffs. Then two processes
 * take turns writing each page: the streak never reaches 2, so with the
 * default hysteresis the homes stay put (no ping-pong). Values are checked
 * after every barrier. */
#include "scash.h"

#include <mpi.h>

#include <stdio.h>

#define PAGE 4096

static int errors;

static void write_page(unsigned char* p, int value)
{
    for (int k = 0; k < PAGE; ++k)
        p[k] = (unsigned char)(value + k);
}

static void check_page(const unsigned char* p, int value, int me, int page)
{
    for (int k = 0; k < PAGE; ++k)
        if (p[k] != (unsigned char)(value + k)) {
            if (errors++ < 5)
                fprintf(stderr, "process %d: page %d byte %d = %d, expected %d\n", me, page, k, p[k],
                    (unsigned char)(value + k));
            return;
        }
}

int main(int argc, char** argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (scash_init() != SCASH_OK)
        return 1;
    const int me = scash_rank(), np = scash_nprocs(), npages = 4 * np;
    unsigned char* m;
    if (scash_alloc((size_t)npages * PAGE, SCASH_CYCLIC, (void**)&m) != SCASH_OK)
        return 1;
    scash_stats_t before, after;
    for (int r = 0; r < 4; ++r) {
        if (r == 2)
            scash_stats_total(&before);
        for (int i = 0; i < npages; ++i)
            if ((i + 1) % np == me)
                write_page(m + (size_t)i * PAGE, 10 * r + i);
        scash_barrier();
        int at_writer = 0;
        for (int i = 0; i < npages; ++i) {
            check_page(m + (size_t)i * PAGE, 10 * r + i, me, i);
            at_writer += scash_home_of(m + (size_t)i * PAGE) == (i + 1) % np;
        }
        if (me == 0)
            printf("single: round %d: %d of %d pages at their writer\n", r, at_writer, npages);
        scash_barrier();
    }
    scash_stats_total(&after);
    if (me == 0)
        printf("single: diffs in rounds 2-3: %llu\n", (unsigned long long)(after.diffs_sent - before.diffs_sent));

    int homes_before[64];
    for (int i = 0; i < npages && i < 64; ++i)
        homes_before[i] = scash_home_of(m + (size_t)i * PAGE);
    for (int r = 0; r < 4; ++r) {
        for (int i = 0; i < npages; ++i)
            if ((i + 2 + r % 2) % np == me)
                write_page(m + (size_t)i * PAGE, 100 + 10 * r + i);
        scash_barrier();
        int unmoved = 0;
        for (int i = 0; i < npages; ++i) {
            check_page(m + (size_t)i * PAGE, 100 + 10 * r + i, me, i);
            unmoved += i < 64 && scash_home_of(m + (size_t)i * PAGE) == homes_before[i];
        }
        if (me == 0)
            printf("alternate: round %d: %d of %d homes unmoved\n", r, unmoved, npages);
        scash_barrier();
    }
    int total = 0;
    MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("migration: values %s (%d wrong pages)\n", total ? "WRONG" : "ok", total);
    scash_finalize();
    MPI_Finalize();
    return total != 0;
}
