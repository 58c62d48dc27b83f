/*
** table.h - the table object (table.c) and its slot arrays: layout,
** encoding and decoding of slots and control bytes, side by side.
**
** The table is ATAB__SHARDS shards, each an array of slots in groups of 8
** under its own lock. Writers (inserts, sweeps, rebuilds) hold the shard's
** lock; readers probe without it, inside a read-side section (thread.h).
**
** One array is one block: `cap` control bytes, then `cap` 8-byte slots
** (cap = 8 * groups). A control byte is CTRL_EMPTY, CTRL_DELETED or, for a
** full slot, 7 bits of the key's hash; a probe reads a group's 8 control
** bytes as one word and tests them all at once (SWAR), so it touches one
** slot per likely match and stops at the first group with an empty slot.
** A full slot holds the atom's address with 16 more bits of the hash in its
** top bits, checked before the atom is read.
**
** The 64-bit hash h is split: bits 58-63 the shard, 51-57 the control
** byte, 35-50 the slot tag, 0-31 the home group (scaled to the group count,
** which is not a power of two: arrays are sized to allocator size classes).
*/
#ifndef ATAB_TABLE_H
#define ATAB_TABLE_H

#include <pthread.h>

#include "static.h"
#include "thread.h"

#define ATAB__SHARD_BITS 6
#define ATAB__SHARDS (1u << ATAB__SHARD_BITS)

/* ---- control bytes and groups ---- */

#define ATAB__GROUP 8
#define ATAB__CTRL_EMPTY 0x80u
#define ATAB__CTRL_DELETED 0xfeu
#define ATAB__LSB8 UINT64_C(0x0101010101010101)
#define ATAB__MSB8 UINT64_C(0x8080808080808080)

static inline unsigned atab__h_shard(uint64_t h)
{
    return (unsigned)(h >> (64 - ATAB__SHARD_BITS));
}

static inline unsigned atab__h_ctrl(uint64_t h)
{
    return (unsigned)(h >> 51) & 0x7f;
}

static inline uint64_t atab__h_tag(uint64_t h)
{
    return (h >> 35) & 0xffff;
}

/* The home group of h among n groups (multiply-shift of the low 32 bits). */
static inline size_t atab__h_group(uint64_t h, size_t ngroups)
{
    return (size_t)(((h & 0xffffffffu) * (uint64_t)ngroups) >> 32);
}

/* A group's control bytes as one little-endian word (byte i = slot i). */
static inline uint64_t atab__group_load(const uint8_t *ctrl, size_t g)
{
    uint64_t w = __atomic_load_n((const uint64_t *)(const void *)(ctrl + g * ATAB__GROUP),
                                 __ATOMIC_ACQUIRE);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

/* Bit 8i+7 set for each byte i of the group equal to c (a full slot's
** control byte). May also flag a byte just above a true match; the slot
** tag and the key compare reject it. */
static inline uint64_t atab__group_match(uint64_t w, unsigned c)
{
    uint64_t x = w ^ (ATAB__LSB8 * c);
    return (x - ATAB__LSB8) & ~x & ATAB__MSB8;
}

static inline uint64_t atab__group_empty(uint64_t w)
{
    return w & ~(w << 6) & ATAB__MSB8;   /* 0x80: bit 7 set, bit 1 clear */
}

static inline uint64_t atab__group_free(uint64_t w)
{
    return w & ~(w << 7) & ATAB__MSB8;   /* empty or deleted: bit 7 set, bit 0 clear */
}

/* The slot index within its group of the lowest flagged byte. */
static inline unsigned atab__mask_first(uint64_t m)
{
    return (unsigned)__builtin_ctzll(m) >> 3;
}

/* ---- slots ---- */

/* Where the address fits in 48 bits (every Linux x86-64 and arm64 process
** unless it asks mmap for more), bit 0 is set and the tag sits in bits
** 48-63. Otherwise the slot is the bare address (bit 0 clear: atoms are at
** least 4-aligned) and every control-byte match reads the atom. */
static inline uint64_t atab__slot_make(const atab_atom *a, uint64_t h)
{
    uint64_t p = (uint64_t)(uintptr_t)a;
    if ((p >> 48) == 0)
        return (atab__h_tag(h) << 48) | p | 1;
    return p;
}

static inline const atab_atom *atab__slot_atom(uint64_t s)
{
    if (s & 1)
        s &= UINT64_C(0x0000fffffffffffe);
    return (const atab_atom *)(uintptr_t)s;
}

static inline int atab__slot_may_match(uint64_t s, uint64_t h)
{
    return !(s & 1) || (s >> 48) == atab__h_tag(h);
}

/* ---- arrays ---- */

/* An array's block is an allocator size class, (4 + m) << e bytes, given
** by its code e << 2 | m; the shard's `arr` word packs the code in its top
** 8 bits with the block's address, so a reader gets both in one load. */
static inline size_t atab__code_bytes(unsigned code)
{
    return (size_t)(4 + (code & 3)) << (code >> 2);
}

/* Groups in a block of a code: as many as fit, 9 bytes a slot. */
static inline size_t atab__code_groups(unsigned code)
{
    return atab__code_bytes(code) / (9 * ATAB__GROUP);
}

typedef struct atab__arr {
    uint8_t *ctrl;      /* cap control bytes */
    uint64_t *slots;    /* cap slots, right after them */
    size_t ngroups;     /* 0: no array */
} atab__arr;

static inline atab__arr atab__arr_of(uint64_t word)
{
    atab__arr v;
    v.ctrl = (uint8_t *)(uintptr_t)(word & ((UINT64_C(1) << 56) - 1));
    v.ngroups = word ? atab__code_groups((unsigned)(word >> 56)) : 0;
    v.slots = (uint64_t *)(void *)(v.ctrl + v.ngroups * ATAB__GROUP);
    return v;
}

static inline size_t atab__arr_cap(atab__arr v)
{
    return v.ngroups * ATAB__GROUP;
}

static inline uint64_t atab__load_slot(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* Is slot i of a group word full? */
static inline int atab__ctrl_full(uint64_t w, unsigned i)
{
    return !((w >> (8 * i + 7)) & 1);
}

/* ---- the table ---- */

typedef struct atab__shard {
    pthread_mutex_t lock;
    uint64_t arr;      /* code << 56 | block address; 0: no array yet */
    uint32_t used;     /* full slots: dynamic atoms + cached static atoms */
    uint32_t deleted;  /* CTRL_DELETED slots */
    uint32_t statics;  /* cached static atoms among `used` */
} __attribute__((aligned(64))) atab__shard;   /* one cache line on LP64 glibc */

struct atab_table {
    atab__shard shards[ATAB__SHARDS];
    atab_allocator alloc;
    uint64_t seed;
    uint64_t id;                /* unique per table, never reused */
    size_t sweep_threshold;
    size_t memory_limit;        /* 0: none */
    size_t bytes;               /* requested bytes in use (atomic) */
    size_t unused;              /* estimate of atoms at count 0 (atomic) */
    uint32_t zero_batch;        /* zeros a record gathers before adding them */
    size_t live;                /* dynamic atoms (atomic) */
    size_t misuse;              /* atoms found over-released, kept (atomic) */
    size_t static_maxlen;       /* longest static atom, 0 with no sets */
    const atab_static_set **sets;
    size_t n_sets;
    size_t hstate;              /* handles << 1 | closing (atomic; table.c) */
    void *host_cache;           /* external.c's cache, or NULL */
    void *raw;                  /* the allocation holding this (aligned) table */
    pthread_mutex_t sweep_lock; /* one sweep at a time */
    pthread_mutex_t reg_lock;   /* the list of records */
    atab__rec *recs;            /* per-thread records (thread.c) */
};

/* The table object's allocation: room to align it to a cache line. */
#define ATAB__TABLE_ALLOC (sizeof(atab_table) + 63)

/* Could one of t's static sets hold these bytes? Only the sets' miss
** filters: no hashing, inline, so a lookup that misses the table and every
** set (most misses) pays a few loads and a multiply. */
static inline int atab__static_may_hold(const atab_table *t, const char *s, size_t len)
{
    if (len > t->static_maxlen)
        return 0;
    for (size_t i = 0; i < t->n_sets; i++)
        if (atab__set_may_hold(t->sets[i], s, len))
            return 1;
    return 0;
}

/* The static atom with these UTF-8 bytes (s may be NULL: a long UTF-16
** key, which no static atom is), or NULL; the filters first, the sets'
** index only where a filter lets the key through. */
static inline const atab_atom *atab__static_lookup(const atab_table *t, const char *s,
                                                   size_t len)
{
    return s && atab__static_may_hold(t, s, len) ? atab__static_find(t, s, len) : NULL;
}

/* For the reporter: calls array_fn(ud, block, bytes) for each shard's slot
** array and fn(ud, atom) for each of its atoms, one shard at a time under
** that shard's lock (so an atom seen is not freed during the call). */
typedef void (*atab__array_fn)(void *ud, const void *block, size_t bytes);
typedef void (*atab__visit_fn)(void *ud, const atab_atom *a);
ATAB__HIDDEN void atab__table_visit_shards(atab_table *t, atab__array_fn array_fn,
                                           atab__visit_fn fn, void *ud);

#endif /* ATAB_TABLE_H */
