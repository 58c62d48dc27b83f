/* SPDX-License-Identifier: MIT */
/*
** stats.h - what bench/suite.c and bench/peers.c both need around their
** workloads: a clock, a token file's distinct count, and the median of a
** figure's repeats. Header-only: each benchmark is one program.
*/
#ifndef ATAB_BENCH_STATS_H
#define ATAB_BENCH_STATS_H

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tokens.h"

static inline double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Distinct tokens among the first n, and their chars + NULs. */
static inline size_t count_distinct(const tokens *t, size_t n, size_t *chars)
{
    const char **v = malloc(n * sizeof *v);
    size_t d = 0;
    memcpy(v, t->s, n * sizeof *v);
    qsort(v, n, sizeof *v, cmp_str);
    *chars = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || strcmp(v[i], v[i - 1]) != 0)
            d++, *chars += strlen(v[i]) + 1;
    free(v);
    return d;
}

/* One figure's values, one per repeat. */
typedef struct cell {
    double *v;
    size_t n;
} cell;

static inline int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline double median(cell *c)
{
    if (!c->n)
        return 0;
    qsort(c->v, c->n, sizeof *c->v, cmp_dbl);
    return c->n % 2 ? c->v[c->n / 2] : (c->v[c->n / 2 - 1] + c->v[c->n / 2]) / 2;
}

#endif
