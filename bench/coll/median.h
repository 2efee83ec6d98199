/* SPDX-License-Identifier: BSD-3-Clause */
/* The median of a sample, for the collective benchmarks (hashi-coll-bench.c,
 * barrier-skew.c), each compiled alone by the installed mpicc. */
#ifndef HASHI_BENCH_COLL_MEDIAN_H
#define HASHI_BENCH_COLL_MEDIAN_H

#include <stdlib.h>

static int cmp_double(const void* a, const void* b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

/* Sorts v in place. */
static double median(double* v, long n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
