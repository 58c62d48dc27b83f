/* SPDX-License-Identifier: MIT */
/*
** test_util.h - helpers shared by the tests: a counting allocator that
** sees every allocation and free, and can be told to fail.
*/
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <pthread.h>
#include <sched.h>
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

/* A second thread with a record on a table, parked until unparked: while
** it lives, the table has a reader besides the test's thread, so what a
** writer unlinks waits for a grace period (a thread alone on its table
** frees it at once). */
typedef struct parked {
    atab_table *t;
    pthread_t th;
    int ready, go;
} parked;

static void *parked_main(void *p)
{
    parked *k = p;
    assert_null(atab_lookup(k->t, "parked: absent", 14));   /* makes its record */
    __atomic_store_n(&k->ready, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&k->go, __ATOMIC_ACQUIRE))
        sched_yield();
    return NULL;
}

static inline void park(parked *k, atab_table *t)
{
    k->t = t;
    k->ready = k->go = 0;
    assert_int_equal(pthread_create(&k->th, NULL, parked_main, k), 0);
    while (!__atomic_load_n(&k->ready, __ATOMIC_ACQUIRE))
        sched_yield();
}

static inline void unpark(parked *k)
{
    __atomic_store_n(&k->go, 1, __ATOMIC_RELEASE);
    assert_int_equal(pthread_join(k->th, NULL), 0);
}

#endif
