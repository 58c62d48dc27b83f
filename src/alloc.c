/*
** alloc.c - allocator hooks: the default (jemalloc or libc) and the
** table's accounting of requested bytes against its memory limit.
*/
#include <stdlib.h>

#include "table.h"

#ifdef ATAB_WITH_JEMALLOC
#include <jemalloc/jemalloc.h>

/* jemalloc through its own API, so the host keeps its own malloc. */
static void *je_alloc(void *ud, size_t size)
{
    (void)ud;
    return mallocx(size ? size : 1, 0);
}

static void je_free(void *ud, void *p, size_t size)
{
    (void)ud;
    if (p)
        sdallocx(p, size ? size : 1, 0);
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
    return malloc(size ? size : 1);
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
#endif

const atab_allocator *atab_default_allocator(void)
{
    return &default_allocator;
}

/* The counter a block is charged to: the table's, or with no memory limit
** to check, `acct` (atoms: the creating or freeing thread's record, so
** threads churning atoms share no written line; thread.c folds a record's
** count into the table's when the record goes). */
static size_t *account(atab_table *t, size_t *acct)
{
    return acct && !t->memory_limit ? acct : &t->bytes;
}

void *atab__alloc_in(atab_table *t, size_t *acct, size_t size)
{
    size_t *b = account(t, acct);
    size_t now = __atomic_add_fetch(b, size, __ATOMIC_RELAXED);
    if (t->memory_limit && now > t->memory_limit) {
        __atomic_sub_fetch(b, size, __ATOMIC_RELAXED);
        return atab__fail(ATAB_ELIMIT);
    }
    void *p = t->alloc.alloc(t->alloc.ud, size);
    if (!p) {
        __atomic_sub_fetch(b, size, __ATOMIC_RELAXED);
        return atab__fail(ATAB_ENOMEM);
    }
    return p;
}

void atab__free_in(atab_table *t, size_t *acct, void *p, size_t size)
{
    if (!p)
        return;
    __atomic_sub_fetch(account(t, acct), size, __ATOMIC_RELAXED);
    t->alloc.free(t->alloc.ud, p, size);
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
