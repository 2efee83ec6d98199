/* SPDX-License-Identifier: BSD-3-Clause */
/* home_move: what one home move costs, and what it saves, round by round.
 *
 * A region of K pages is placed at process H (scash_set_home). Then, for R
 * rounds, process W alone writes every page (new values each round) and
 * the barrier ends the round; with -r the old home H then reads every page
 * (a consumer) before a second barrier. With dynamic homes the pages move
 * to W after the hysteresis (-H, default 2 written intervals: placed homes
 * wait for it); -S keeps them at H. Put W in H's cluster or in another one to see
 * what the WAN does to each choice: a move itself sends nothing (every
 * process applies the same rule to the same write notices), but it turns
 * W's diffs into H's fetches when H reads.
 *
 * Process 0 prints one line per round (its wall time, from the barrier
 * before it to the last barrier of the round, and the counters of all
 * processes for that round) and checks every value H read. */
#include "scash.h"

#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE 4096
#define MAX_ROUNDS 256

enum { MESSAGES, BYTES, DIFF_BYTES, FETCHED, MOVES, COUNTERS };

static unsigned char value(int round, size_t byte) { return (unsigned char)(round * 7 + byte % 251); }

static void local_counters(unsigned long long* c)
{
    scash_stats_t s;
    scash_stats_local(&s);
    c[MESSAGES] = s.messages;
    c[BYTES] = s.bytes;
    c[DIFF_BYTES] = s.diff_bytes;
    c[FETCHED] = s.pages_fetched;
    c[MOVES] = s.home_moves;
}

int main(int argc, char** argv)
{
    int provided, pages = 64, rounds = 8, writer = 1, home = 0, reader = 0, migrate = 1, hysteresis = 2;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "-k") && i + 1 < argc)
            pages = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-n") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-w") && i + 1 < argc)
            writer = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-h") && i + 1 < argc)
            home = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-H") && i + 1 < argc)
            hysteresis = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-r"))
            reader = 1;
        else if (!strcmp(argv[i], "-S"))
            migrate = 0;
        else {
            fprintf(stderr, "usage: home_move [-k PAGES] [-n ROUNDS] [-w WRITER] [-h HOME] [-H HYSTERESIS] [-r] [-S]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (scash_init() != SCASH_OK)
        MPI_Abort(MPI_COMM_WORLD, 1);
    const int me = scash_rank(), np = scash_nprocs();
    if (pages < 1 || rounds < 1 || rounds > MAX_ROUNDS || writer < 0 || writer >= np || home < 0 || home >= np ||
        writer == home) {
        if (me == 0)
            fprintf(stderr, "home_move: need PAGES >= 1, 1 <= ROUNDS <= %d, WRITER and HOME distinct in 0..%d\n",
                MAX_ROUNDS, np - 1);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (scash_set_migration(migrate, hysteresis) != SCASH_OK)
        MPI_Abort(MPI_COMM_WORLD, 2);
    unsigned char* m;
    const size_t bytes = (size_t)pages * PAGE;
    if (scash_alloc(bytes, SCASH_BLOCK, (void**)&m) != SCASH_OK || scash_set_home(m, bytes, home) != SCASH_OK)
        MPI_Abort(MPI_COMM_WORLD, 1);

    static double seconds[MAX_ROUNDS];
    static unsigned long long delta[MAX_ROUNDS][COUNTERS], total[MAX_ROUNDS][COUNTERS];
    static int home_after[MAX_ROUNDS];
    size_t wrong = 0;
    scash_barrier();
    for (int r = 0; r < rounds; ++r) {
        unsigned long long before[COUNTERS], after[COUNTERS];
        local_counters(before);
        const double t0 = MPI_Wtime();
        if (me == writer)
            for (size_t b = 0; b < bytes; ++b)
                m[b] = value(r, b);
        scash_barrier();
        if (reader) {
            if (me == home)
                for (size_t b = 0; b < bytes; ++b)
                    wrong += m[b] != value(r, b);
            scash_barrier();
        }
        seconds[r] = MPI_Wtime() - t0;
        local_counters(after);
        for (int c = 0; c < COUNTERS; ++c)
            delta[r][c] = after[c] - before[c];
        home_after[r] = scash_home_of(m);
    }
    for (size_t b = 0; b < bytes; ++b) /* everybody sees the last round's values */
        wrong += m[b] != value(rounds - 1, b);
    unsigned long long wrong_all = 0, wrong_mine = wrong;
    MPI_Reduce(delta, total, MAX_ROUNDS * COUNTERS, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&wrong_mine, &wrong_all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0) {
        printf("home_move: P=%d pages=%d rounds=%d writer=%d home=%d reader=%s homes=%s hysteresis=%d\n", np, pages,
            rounds, writer, home, reader ? "home" : "none", migrate ? "dynamic" : "static", hysteresis);
        for (int r = 0; r < rounds; ++r)
            printf("home_move: round %d: time=%.4f s messages=%llu bytes=%llu diff_bytes=%llu fetched=%llu "
                   "moves=%llu home=%d\n",
                r, seconds[r], total[r][MESSAGES], total[r][BYTES], total[r][DIFF_BYTES], total[r][FETCHED],
                total[r][MOVES], home_after[r]);
        printf("home_move: check: %s (%llu wrong bytes)\n", wrong_all ? "WRONG VALUES" : "values ok", wrong_all);
    }
    int status = wrong_all != 0;
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    scash_free(m);
    scash_finalize();
    MPI_Finalize();
    return status;
}
