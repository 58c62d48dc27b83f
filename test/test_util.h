/* SPDX-License-Identifier: MIT */
/*
** test_util.h - helpers shared by the tests: a counting allocator that
** sees every allocation and free, and can be told to fail.
*/
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "atomtab.h"
#include "test_u16.h"

typedef struct counting_alloc {
    long live;          /* blocks allocated and not freed */
    long allocs, frees; /* totals */
    long attempts;      /* allocations asked for, failed ones included */
    size_t bytes;       /* bytes outstanding (by requested size) */
    long fail_at;       /* fail the allocation with this 1-based number */
    int fail_after;     /* with fail_at: keep failing from then on */
    int size_mismatch;  /* a free named another size than its alloc */
} counting_alloc;

/* Each block carries a 16-byte prefix with its requested size, so frees
** are checked against allocations. */
static void *ca_alloc(void *ud, size_t size)
{
    counting_alloc *c = ud;
    long n = ++c->attempts;
    if (c->fail_at && (n == c->fail_at || (c->fail_after && n > c->fail_at)))
        return NULL;
    unsigned char *p = malloc(size + 16);
    if (!p)
        return NULL;
    memcpy(p, &size, sizeof size);
    c->allocs++;
    c->live++;
    c->bytes += size;
    return p + 16;
}

static void ca_free(void *ud, void *p, size_t size)
{
    counting_alloc *c = ud;
    size_t had;
    if (!p)
        return;
    unsigned char *b = (unsigned char *)p - 16;
    memcpy(&had, b, sizeof had);
    if (had != size)
        c->size_mismatch = 1;
    c->frees++;
    c->live--;
    c->bytes -= had;
    free(b);
}

static size_t ca_usable(void *ud, const void *p, size_t size)
{
    (void)ud; (void)p;
    return size;
}

static inline atab_allocator ca_allocator(counting_alloc *c)
{
    atab_allocator a = {ca_alloc, ca_free, ca_usable, c};
    return a;
}

/* Options for a table on `al` with a fixed seed and no static sets. */
static inline atab_options plain_options(const atab_allocator *al, uint64_t seed)
{
    atab_options o;
    memset(&o, 0, sizeof o);
    o.flags = ATAB_FIXED_SEED | ATAB_NO_DEFAULT_STATICS;
    o.seed = seed;
    o.allocator = al;
    return o;
}

/* A table with a fixed seed and no static sets: the plain dynamic table. */
static inline atab_table *plain_table(const atab_allocator *al)
{
    atab_options o = plain_options(al, 42);
    return atab_table_new(&o);
}

/* A table with plain_options(al, seed) that sweeps once `threshold` atoms
** are unused (a thread's queue holds up to that many; SIZE_MAX: only on
** atab_gc, with no queues). */
static inline atab_table *sweeping_table(const atab_allocator *al, uint64_t seed,
                                         size_t threshold)
{
    atab_options o = plain_options(al, seed);
    o.sweep_threshold = threshold;
    return atab_table_new(&o);
}

typedef struct report_amount_at {
    const char *path;
    int64_t amount;
} report_amount_at;

static inline int report_amount_cb(void *ud, const char *path, int kind, int units,
                                   int64_t amount, const char *desc)
{
    report_amount_at *a = ud;
    (void)kind; (void)units; (void)desc;
    if (strcmp(path, a->path) == 0)
        a->amount = amount;
    return 0;
}

/* The amount of t's report entry at `path`, or `missing` when the report
** has none; the report must succeed. */
static inline int64_t report_amount(atab_table *t, const char *path, int64_t missing)
{
    report_amount_at a = {path, missing};
    assert_int_equal(atab_report(t, report_amount_cb, &a), ATAB_OK);
    return a.amount;
}

#endif
