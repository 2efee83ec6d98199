/* SPDX-License-Identifier: BSD-3-Clause */
/* Homes placed by the program (scash_set_home). Process 0 fills a region
 * with block homes, then each quarter's home is set to a process other than
 * its block home: the values survive the move (the new home fetches the
 * pages it lacks), scash_home_of reports the new homes, and a writer that
 * is the new home sends no diffs. A range sharing a page with its
 * neighbour places the whole page. Mismatched or bad arguments are errors
 * on every process, without a hang. */
#include "scash.h"

#include <mpi.h>

#include <stdio.h>

#define PAGE 4096
#define PAGES_PER_PROC 8

static int errors;

static void expect(int ok, const char* what, int me)
{
    if (!ok && errors++ < 10)
        fprintf(stderr, "process %d: %s\n", me, what);
}

int main(int argc, char** argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (scash_init() != SCASH_OK)
        return 1;
    const int me = scash_rank(), np = scash_nprocs(), npages = PAGES_PER_PROC * np;
    const size_t quarter = (size_t)PAGES_PER_PROC * PAGE;
    unsigned char* m;
    if (scash_alloc((size_t)npages * PAGE, SCASH_BLOCK, (void**)&m) != SCASH_OK)
        return 1;
    if (me == 0)
        for (size_t i = 0; i < (size_t)npages * PAGE; ++i)
            m[i] = (unsigned char)(i * 13 + 1);
    scash_barrier();
    /* Quarter q (block home q) goes to process (q + 1) % np. */
    for (int q = 0; q < np; ++q)
        expect(scash_set_home(m + q * quarter, quarter, (q + 1) % np) == SCASH_OK, "scash_set_home failed", me);
    for (int i = 0; i < npages; ++i)
        expect(scash_home_of(m + (size_t)i * PAGE) == (i / PAGES_PER_PROC + 1) % np, "wrong home after placement", me);
    for (size_t i = 0; i < (size_t)npages * PAGE; ++i)
        if (m[i] != (unsigned char)(i * 13 + 1)) {
            expect(0, "value lost by the placement", me);
            break;
        }
    scash_barrier();

    /* Each process rewrites the quarter it is home of now: no diffs. */
    scash_stats_t before, after;
    scash_stats_total(&before);
    const int mine = (me + np - 1) % np;
    for (size_t i = 0; i < quarter; ++i)
        m[mine * quarter + i] = (unsigned char)(i + me);
    scash_barrier();
    scash_stats_total(&after);
    for (int q = 0; q < np; ++q)
        for (size_t i = 0; i < quarter; ++i)
            if (m[q * quarter + i] != (unsigned char)(i + (q + 1) % np)) {
                expect(0, "value written by the new home lost", me);
                break;
            }
    if (me == 0)
        printf("placement: diffs after placing homes at the writers: %llu\n",
            (unsigned long long)(after.diffs_sent - before.diffs_sent));

    /* A range of one byte at a page's end places that whole page. */
    expect(scash_set_home(m + PAGE - 1, 1, np - 1) == SCASH_OK, "one-byte placement failed", me);
    expect(scash_home_of(m) == np - 1, "the page holding the byte did not move", me);
    expect(scash_home_of(m + PAGE) == 1 % np, "the next page moved too", me);

    /* Errors: every process gets one, nobody hangs. */
    int x = 0;
    expect(scash_set_home(m, PAGE, np) == SCASH_ERR_ARG, "process out of range accepted", me);
    expect(scash_set_home(&x, sizeof x, 0) == SCASH_ERR_ARG, "private address accepted", me);
    expect(scash_set_home(m, (size_t)(npages + 1) * PAGE, 0) == SCASH_ERR_ARG, "range past the region accepted", me);
    expect(scash_set_home(m, PAGE, me) == SCASH_ERR_ARG, "different processes accepted", me);

    int total = 0;
    MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("placement: %s (%d errors)\n", total ? "FAILED" : "ok", total);
    scash_finalize();
    MPI_Finalize();
    return total != 0;
}
