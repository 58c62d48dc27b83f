/*
** atab_int.h - private declarations shared by the library's files.
** Nothing here is installed; every name is atab__ and hidden.
*/
#ifndef ATAB_INT_H
#define ATAB_INT_H

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "atomtab.h"

#define ATAB__HIDDEN __attribute__((visibility("hidden")))
#define ATAB__LIKELY(x) __builtin_expect(!!(x), 1)
#define ATAB__UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- errors (error.c) ---- */

/* Sets this thread's last error; returns NULL so callers can `return`. */
ATAB__HIDDEN void *atab__fail(atab_status code);
ATAB__HIDDEN void atab__set_error(atab_status code);

/* ---- allocation (alloc.c) ---- */

/* Allocates `size` bytes counted against the table's memory limit.
** Returns NULL and sets ATAB_ELIMIT or ATAB_ENOMEM on failure. */
ATAB__HIDDEN void *atab__alloc(atab_table *t, size_t size);
ATAB__HIDDEN void atab__free(atab_table *t, void *p, size_t size);
/* Usable size of a block from the table's allocator; 0 when unknown. */
ATAB__HIDDEN size_t atab__usable(const atab_table *t, const void *p, size_t size);

/* ---- keys and atoms (atom.c) ---- */

/* What is being looked up: UTF-8 bytes, or UTF-16 units too long to
** convert on the stack. `len` is always the UTF-8 length. */
typedef struct atab__key {
    const char *s;          /* UTF-8 bytes, or NULL for a UTF-16 key */
    const uint16_t *u16;    /* UTF-16 units when s is NULL */
    size_t n16;             /* units in u16 */
    size_t len;             /* UTF-8 bytes */
    uint64_t hash;          /* seeded XXH3 of the UTF-8 bytes */
} atab__key;

#define ATAB__U16_STACK 256 /* UTF-16 keys up to this many UTF-8 bytes are
                               converted on the stack */

ATAB__HIDDEN uint64_t atab__hash_bytes(uint64_t seed, const char *s, size_t len);
ATAB__HIDDEN uint64_t atab__hash_key_u16(uint64_t seed, const atab__key *k);
/* Validates UTF-16; sets *len8 to the UTF-8 length. ATAB_EUTF16 on an
** unpaired surrogate, ATAB_ETOOLONG past ATAB_MAX_LEN. */
ATAB__HIDDEN int atab__utf16_measure(const uint16_t *s, size_t n, size_t *len8);
ATAB__HIDDEN void atab__utf16_encode(char *dst, const uint16_t *s, size_t n);
ATAB__HIDDEN int atab__key_equals(const atab__key *k, const atab_atom *a);
/* A new dynamic atom with count 1, or NULL (error set). */
ATAB__HIDDEN atab_atom *atab__atom_new(atab_table *t, const atab__key *k);
ATAB__HIDDEN void atab__atom_free(atab_table *t, atab_atom *a);
ATAB__HIDDEN size_t atab__atom_size(const atab_atom *a);

#define ATAB__REF_SAT 0x80000000u /* counts at or above never change again */

static inline uint32_t atab__refcnt(const atab_atom *a)
{
    return __atomic_load_n(&a->atab__refcnt, __ATOMIC_ACQUIRE);
}

/* Takes a reference; returns the old count. */
static inline uint32_t atab__incref(const atab_atom *a)
{
    uint32_t *rc = (uint32_t *)&a->atab__refcnt;
    uint32_t old = __atomic_fetch_add(rc, 1, __ATOMIC_RELAXED);
    if (ATAB__UNLIKELY(old >= ATAB__REF_SAT))
        __atomic_store_n(rc, ATAB__REF_SAT | (ATAB__REF_SAT >> 1), __ATOMIC_RELAXED);
    return old;
}

/* ---- static sets (static.c) ---- */

/* The static atom with these UTF-8 bytes in one of the table's sets. */
ATAB__HIDDEN const atab_atom *atab__static_find(const atab_table *t,
                                                const char *s, size_t len);
/* Registers the options' sets (and the default set) on a new table;
** -1 with the error set on bad sets or no memory. */
ATAB__HIDDEN int atab__static_init(atab_table *t, const atab_options *o);
ATAB__HIDDEN void atab__static_fini(atab_table *t);

/* ---- the table (table.c) ---- */

#define ATAB__SHARD_BITS 6
#define ATAB__SHARDS (1u << ATAB__SHARD_BITS)

/* One shard: an open-addressing, linear-probing array of slots under one
** mutex. A slot is 0 (empty), ATAB__TOMB (deleted) or an atom pointer with
** 16 bits of its hash folded in (see table.c). */
typedef struct atab__shard {
    pthread_mutex_t lock;
    uint64_t *slots;
    size_t mask;     /* capacity - 1; capacity 0 when slots is NULL */
    size_t used;     /* live slots: dynamic atoms + cached static atoms */
    size_t tombs;    /* deleted slots */
    size_t statics;  /* cached static atoms among `used` */
} __attribute__((aligned(64))) atab__shard;

struct atab_table {
    atab__shard shards[ATAB__SHARDS];
    atab_allocator alloc;
    uint64_t seed;
    size_t sweep_threshold;
    size_t memory_limit;        /* 0: none */
    size_t bytes;               /* requested bytes in use (atomic) */
    size_t unused;              /* approximate count of zero-count atoms (atomic) */
    int sweeping;               /* a self-triggered sweep is running (atomic) */
    size_t static_maxlen;       /* longest static atom, 0 with no sets */
    const atab_static_set **sets;
    size_t n_sets;
    size_t handles;             /* outstanding external handles (atomic) */
    int closing;                /* atab_table_free was called (atomic) */
    void *host_cache;           /* external.c's cache, or NULL */
    void *raw;                  /* the allocation holding this (aligned) table */
};

/* The table object's allocation: room to align it to a cache line. */
#define ATAB__TABLE_ALLOC (sizeof(atab_table) + 63)

/* Frees everything; atab_table_free calls it unless handles are out. */
ATAB__HIDDEN void atab__table_destroy(atab_table *t);

/* Calls fn for every live slot's atom of one shard at a time, under that
** shard's lock (so an atom seen is not freed during the call). */
typedef void (*atab__visit_fn)(void *ud, const atab_atom *a);
ATAB__HIDDEN void atab__table_visit(atab_table *t, atab__visit_fn fn, void *ud);

/* For the memory reporter (report.c): like atab__table_visit, and for each
** shard that has a slot array, first calls array_fn with the array and its
** requested size, under the same lock. One shard locked at a time. */
typedef void (*atab__array_fn)(void *ud, const void *slots, size_t bytes);
ATAB__HIDDEN void atab__table_visit_shards(atab_table *t, atab__array_fn array_fn,
                                           atab__visit_fn fn, void *ud);

#endif /* ATAB_INT_H */
