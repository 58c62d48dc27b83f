/* SPDX-License-Identifier: MIT */
/*
** alloc.c - allocator hooks: the default (jemalloc or libc) and the
** table's accounting of requested bytes against its memory limit.
*/
#include <stdlib.h>

#include "table.h"

/* atab_allocator's blocks are aligned to 16. jemalloc (as the library's
** allocator, or as the process's malloc) has an 8-byte size class aligned
** to 8 only; its classes from 16 bytes up are multiples of 16, aligned so.
** Small requests therefore ask for 16 bytes. */
#define MIN_BLOCK 16
#define BLOCK_SIZE(size) ((size) < MIN_BLOCK ? (size_t)MIN_BLOCK : (size))

#ifdef ATAB_WITH_JEMALLOC
#include <jemalloc/jemalloc.h>

/* jemalloc through its own API, so the host keeps its own malloc. */
static void *je_alloc(void *ud, size_t size)
{
    (void)ud;
    return mallocx(BLOCK_SIZE(size), 0);
}

static void je_free(void *ud, void *p, size_t size)
{
    (void)ud;
    if (p)
        sdallocx(p, BLOCK_SIZE(size), 0);
}

static size_t je_usable(void *ud, const void *p, size_t size)
{
    (void)ud; (void)size;
    return sallocx((void *)p, 0);
}

static const atab_allocator default_allocator = {je_alloc, je_free, je_usable, NULL};
#else
#include <malloc.h>

static void *libc_alloc(void *ud, size_t size)
{
    (void)ud;
    return malloc(BLOCK_SIZE(size));
}

static void libc_free(void *ud, void *p, size_t size)
{
    (void)ud; (void)size;
    free(p);
}

static size_t libc_usable(void *ud, const void *p, size_t size)
{
    (void)ud; (void)size;
    return malloc_usable_size((void *)p);
}

static const atab_allocator default_allocator = {libc_alloc, libc_free, libc_usable, NULL};

#ifdef __GLIBC__
#include <unistd.h>

/* glibc malloc's own bytes beside a block whose malloc_usable_size is u:
** its chunk's header. A chunk in an arena is a multiple of 16 bytes, and
** its block is the chunk less its size field (one size_t; the next
** chunk's prev_size field is the block's last bytes). A chunk mmapped
** alone is whole pages, and its block starts 16 bytes in. A usable size of
** neither shape is not glibc's (ASan, valgrind or another malloc in
** place of it): SIZE_MAX, unknown. */
static size_t libc_overhead(size_t u)
{
    if ((u + sizeof(size_t)) % 16 == 0)
        return sizeof(size_t);
    if ((u + 16) % (size_t)getpagesize() == 0)
        return 16;
    return SIZE_MAX;
}
#endif
#endif

const atab_allocator *atab_default_allocator(void)
{
    return &default_allocator;
}

/* Charges d (added, modulo 2^64) to a block's counter: with a memory limit
** the table's, shared, where the limit is checked: a charge that would pass
** it is refused (-1) before anything is added, so no other thread ever sees
** a refused request's bytes (a CAS loop: the compare and the add are one
** step; a release, d past SIZE_MAX / 2, is never refused); without one,
** `acct` when given, the creating or freeing thread's record, which only
** that thread writes (relaxed atomic stores, no read-modify-write, as
** thread.h says of atab__rec.bytes: threads churning atoms share no
** written line; thread.c folds a record's count into the table's when the
** record goes, and sums them for a report). */
static int charge(atab_table *t, size_t *acct, size_t d)
{
    if (t->memory_limit && d < SIZE_MAX / 2) {   /* an allocation: checked first */
        size_t now = __atomic_load_n(&t->bytes, __ATOMIC_RELAXED);
        do {
            if (now + d < now || now + d > t->memory_limit) {
                ATAB__PAUSE("charge:refused", t);
                return -1;   /* nothing was added */
            }
        } while (!__atomic_compare_exchange_n(&t->bytes, &now, now + d, 1, __ATOMIC_RELAXED,
                                              __ATOMIC_RELAXED));
    } else if (t->memory_limit) {
        __atomic_add_fetch(&t->bytes, d, __ATOMIC_RELAXED);
    } else if (acct) {
        __atomic_store_n(acct, __atomic_load_n(acct, __ATOMIC_RELAXED) + d, __ATOMIC_RELAXED);
    } else {
        __atomic_add_fetch(&t->bytes, d, __ATOMIC_RELAXED);
    }
    return 0;
}

void *atab__alloc_in(atab_table *t, size_t *acct, size_t size)
{
    if (charge(t, acct, size) != 0)
        return atab__fail(ATAB_ELIMIT);
    void *p = t->alloc.alloc(t->alloc.ud, size);
    if (!p) {
        charge(t, acct, -size);
        return atab__fail(ATAB_ENOMEM);
    }
    return p;
}

void atab__free_in(atab_table *t, size_t *acct, void *p, size_t size)
{
    if (!p)
        return;
    t->alloc.free(t->alloc.ud, p, size);   /* then the bytes: never more out than charged */
    charge(t, acct, -size);
}

void *atab__alloc(atab_table *t, size_t size)
{
    return atab__alloc_in(t, NULL, size);
}

void atab__free(atab_table *t, void *p, size_t size)
{
    atab__free_in(t, NULL, p, size);
}

size_t atab__usable(const atab_table *t, const void *p, size_t size)
{
    return t->alloc.usable_size ? t->alloc.usable_size(t->alloc.ud, p, size) : 0;
}

size_t atab__overhead(const atab_table *t, size_t usable)
{
#if !defined(ATAB_WITH_JEMALLOC) && defined(__GLIBC__)
    if (t->alloc.usable_size == libc_usable)
        return libc_overhead(usable);
#endif
    (void)t; (void)usable;
    return SIZE_MAX;   /* jemalloc keeps no header; a host's hooks: unknown */
}
