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
#include "static_hash.h"

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

/* Keys of at most ATAB__SHORT_KEY bytes (most atoms) hash inline on the
** hit path: the key's first and last words (overlapping; every byte is in
** one of them), each keyed, multiplied as 128 bits and the halves folded,
** twice (the multiply-fold mix of wyhash and rapidhash). atab__hash_bytes
** gives the same value: it calls this for short keys, XXH3 for longer
** ones. Long UTF-16 keys (atab__hash_key_u16) are always longer.
** Before (XXH3 through a call): 184.3 Ir per corpus hit (callgrind). */
#define ATAB__SHORT_KEY 16
#if defined(__SIZEOF_INT128__)
static inline uint64_t atab__fold_mul(uint64_t a, uint64_t b)
{
    __extension__ typedef unsigned __int128 u128;
    u128 m = (u128)a * b;
    return (uint64_t)m ^ (uint64_t)(m >> 64);
}
#else
static inline uint64_t atab__fold_mul(uint64_t a, uint64_t b)
{
    uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
    uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    uint64_t mid = (ll >> 32) + (uint32_t)lh + (uint32_t)hl;
    uint64_t lo = (mid << 32) | (uint32_t)ll;
    uint64_t hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
    return lo ^ hi;
}
#endif

static inline uint64_t atab__hash_short(uint64_t seed, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    uint64_t a = 0, b = 0;
    if (len >= 8) {
        memcpy(&a, p, 8), memcpy(&b, p + len - 8, 8);
    } else if (len >= 4) {
        uint32_t x, y;
        memcpy(&x, p, 4), memcpy(&y, p + len - 4, 4);
        a = x, b = y;
    } else if (len > 0) {
        a = (uint64_t)p[0] << 16 | (uint64_t)p[len / 2] << 8 | p[len - 1];
    }
    /* the seed keys both factors, so no key can zero one of them on its
    ** own (that would make every key with that word collide) */
    uint64_t s2 = (seed << 32 | seed >> 32) ^ UINT64_C(0x8bb84b93962eacc9);
    uint64_t h = atab__fold_mul(a ^ seed ^ UINT64_C(0x2d358dccaa6c78a5), b ^ s2);
    return atab__fold_mul(h ^ len ^ UINT64_C(0x4b33a62ed433d4a3),
                          (seed ^ UINT64_C(0x9e3779b97f4a7c15)) | 1);
}

static inline uint64_t atab__hash_inline(uint64_t seed, const char *s, size_t len)
{
    if (ATAB__LIKELY(len <= ATAB__SHORT_KEY))
        return atab__hash_short(seed, s, len);
    return atab__hash_bytes(seed, s, len);
}
ATAB__HIDDEN uint64_t atab__hash_key_u16(uint64_t seed, const atab__key *k);
/* Validates UTF-16; sets *len8 to the UTF-8 length. ATAB_EUTF16 on an
** unpaired surrogate, ATAB_ETOOLONG past ATAB_MAX_LEN. */
ATAB__HIDDEN int atab__utf16_measure(const uint16_t *s, size_t n, size_t *len8);
ATAB__HIDDEN void atab__utf16_encode(char *dst, const uint16_t *s, size_t n);
ATAB__HIDDEN int atab__key_equals_u16(const atab__key *k, const atab_atom *a);

/* Equal n bytes? Inline for the short strings atoms mostly are: whole
** words, the last one overlapping, never a byte past either end. */
static inline int atab__eq_bytes(const char *x, const char *y, size_t n)
{
    uint64_t a, b;
    uint32_t c, d;
    if (n >= 8) {
        if (n > 16)
            return memcmp(x, y, n) == 0;
        memcpy(&a, x, 8), memcpy(&b, y, 8);
        if (a != b)
            return 0;
        memcpy(&a, x + n - 8, 8), memcpy(&b, y + n - 8, 8);
        return a == b;
    }
    if (n >= 4) {
        memcpy(&c, x, 4), memcpy(&d, y, 4);
        if (c != d)
            return 0;
        memcpy(&c, x + n - 4, 4), memcpy(&d, y + n - 4, 4);
        return c == d;
    }
    if (n == 0)
        return 1;
    /* 1-3 bytes: first, middle and last cover them all, without a loop
    ** (a 3-byte hit: 190 -> 175 Ir, callgrind) */
    return x[0] == y[0] && x[n / 2] == y[n / 2] && x[n - 1] == y[n - 1];
}

static inline int atab__key_equals(const atab__key *k, const atab_atom *a)
{
    if (ATAB__LIKELY(k->s != NULL))
        return atab_len(a) == k->len && atab__eq_bytes(atab_chars(a), k->s, k->len);
    return atab__key_equals_u16(k, a);
}
/* A new dynamic atom with count 1, or NULL (error set). */
ATAB__HIDDEN atab_atom *atab__atom_new(atab_table *t, const atab__key *k);
ATAB__HIDDEN void atab__atom_free(atab_table *t, atab_atom *a);
ATAB__HIDDEN size_t atab__atom_size(const atab_atom *a);

/* An atom's own count S is a signed 32-bit value in atab__refcnt: the true
** count is S plus the deltas in threads' caches (thread.c), so S alone may
** dip below zero. From ATAB__REF_SAT up it is saturated: never changes
** again, and the atom is never freed. */
#define ATAB__REF_SAT (1 << 30)
#define ATAB__REF_PINNED (ATAB__REF_SAT + (ATAB__REF_SAT >> 1))

static inline int32_t atab__count(const atab_atom *a)
{
    return (int32_t)__atomic_load_n(&a->atab__refcnt, __ATOMIC_ACQUIRE);
}

/* Adds d to S (saturating); returns the new S. */
static inline int32_t atab__count_add(const atab_atom *a, int32_t d)
{
    uint32_t *rc = (uint32_t *)&a->atab__refcnt;
    uint32_t c = __atomic_load_n(rc, __ATOMIC_RELAXED);
    int32_t n;
    do {
        if ((int32_t)c >= ATAB__REF_SAT)
            return (int32_t)c;
        n = (int32_t)c + d;
        if (n >= ATAB__REF_SAT)
            n = ATAB__REF_PINNED;
    } while (!__atomic_compare_exchange_n(rc, &c, (uint32_t)n, 1, __ATOMIC_ACQ_REL,
                                          __ATOMIC_RELAXED));
    return n;
}

/* A growable array of atoms (sweep candidates), in the table's memory. */
typedef struct atab__vec {
    const atab_atom **v;
    size_t n, cap;
} atab__vec;

/* ---- per-thread records (thread.c) ---- */

/* A thread's record: its section counter, then its cache of count deltas,
** 4-way set-associative, indexed by the atom's address. */
#define ATAB__SETS 64
#define ATAB__WAYS 4
#define ATAB__DELTA_MAX (1 << 28)

typedef struct atab__ent {
    const atab_atom *a;
    int32_t d;        /* this thread's delta to a's count */
    uint32_t queued;  /* a was queued as a candidate since the last sweep */
} atab__ent;

typedef struct atab__rec {
    uint64_t seq;             /* odd while the owner is inside a section */
    struct atab__rec *next;
    uintptr_t owner;          /* the owning thread's token; 0: free to adopt */
    void *raw;                /* the allocation holding this (aligned) record */
    atab__vec cands;          /* candidates queued by this thread */
    atab__ent e[ATAB__SETS * ATAB__WAYS];
} atab__rec;

static inline atab__ent *atab__rec_set(atab__rec *r, const atab_atom *a)
{
    return &r->e[(atab_hash(a) % ATAB__SETS) * ATAB__WAYS];
}

static inline atab__ent *atab__rec_find(atab__rec *r, const atab_atom *a)
{
    atab__ent *set = atab__rec_set(r, a);
    for (unsigned w = 0; w < ATAB__WAYS; w++)
        if (set[w].a == a)
            return &set[w];
    return NULL;
}

/* Enters a read-side section: returns this thread's record, or NULL when
** the thread has none (no memory, or a debug build) and must lock. Between
** enter and leave no atom or slot array the thread can see is freed. */
ATAB__HIDDEN atab__rec *atab__enter_slow(atab_table *t);

#define ATAB__TLS __attribute__((tls_model("initial-exec")))

/* The record this thread used last, for the one-compare fast path. */
typedef struct atab__tls_pair {
    uint64_t id;
    atab__rec *rec;
} atab__tls_pair;
extern ATAB__HIDDEN _Thread_local atab__tls_pair atab__tls_last ATAB__TLS;
extern ATAB__HIDDEN int atab__membarrier_state;   /* > 0: readers need no fence */

/* Take or drop one reference through the thread's cache (inside a section). */
ATAB__HIDDEN void atab__rec_ref(atab_table *t, atab__rec *r, const atab_atom *a);
ATAB__HIDDEN void atab__rec_release(atab_table *t, atab__rec *r, const atab_atom *a);
/* Waits until no reader is inside a section and keeps new ones out. */
ATAB__HIDDEN void atab__stop_readers(atab_table *t);
ATAB__HIDDEN void atab__resume_readers(atab_table *t);
/* Waits until every reader inside a section now has left it. */
ATAB__HIDDEN void atab__synchronize(atab_table *t);
/* With readers stopped: moves every delta into its atom's count and appends
** the candidates (queued ones, and those now at or below zero) to out.
** Returns -1 when out could not grow (t->full_scan is then set). */
ATAB__HIDDEN int atab__flush_deltas(atab_table *t, atab__vec *out);
ATAB__HIDDEN int atab__vec_push(atab_table *t, atab__vec *v, const atab_atom *a);
ATAB__HIDDEN void atab__vec_free(atab_table *t, atab__vec *v);
ATAB__HIDDEN void atab__threads_init(atab_table *t);
ATAB__HIDDEN void atab__threads_fini(atab_table *t);

/* ---- static sets (static.c) ---- */

/* The static atom with these UTF-8 bytes in one of the table's sets. */
ATAB__HIDDEN const atab_atom *atab__static_find(const atab_table *t,
                                                const char *s, size_t len);
/* Registers the options' sets (and the default set) on a new table;
** -1 with the error set on bad sets or no memory. */
ATAB__HIDDEN int atab__static_init(atab_table *t, const atab_options *o);
ATAB__HIDDEN void atab__static_fini(atab_table *t);
/* The table's heap block listing its sets (*bytes its size), or NULL when
** it has none (no sets, or the default set alone, which is not copied). */
ATAB__HIDDEN const void *atab__static_heap(const atab_table *t, size_t *bytes);

/* ---- the table (table.c) ---- */

#define ATAB__SHARD_BITS 6
#define ATAB__SHARDS (1u << ATAB__SHARD_BITS)

/* One shard: an open-addressing, linear-probing array of slots. Writers
** (inserts, sweeps) hold the mutex; readers probe without it, inside a
** read-side section. A slot is 0 (empty), ATAB__TOMB (deleted) or an atom
** pointer with 16 bits of its hash folded in (see table.c). `arr` packs the
** array's address with its capacity's code in the top 8 bits, so readers
** get both in one load; 0 when the shard has no array yet. */
typedef struct atab__shard {
    pthread_mutex_t lock;
    uint64_t arr;
    uint32_t used;     /* live slots: dynamic atoms + cached static atoms */
    uint32_t tombs;    /* deleted slots */
    uint32_t statics;  /* cached static atoms among `used` */
} __attribute__((aligned(64))) atab__shard;   /* one cache line on LP64 glibc */

static inline uint64_t *atab__arr_slots(uint64_t arr)
{
    return (uint64_t *)(uintptr_t)(arr & ((UINT64_C(1) << 56) - 1));
}

/* Capacities are (4 + m) << e slots, so an array of 8-byte slots is always
** one of jemalloc's size classes (four per doubling): no slop, and growth
** in steps of 1.25-1.5x. The top byte of `arr` holds e << 2 | m. */
static inline size_t atab__arr_cap(uint64_t arr)
{
    return arr ? (size_t)(4 + ((arr >> 56) & 3)) << (arr >> 58) : 0;
}

/* The home slot of hash h in an array of `cap` slots: the low 32 bits of h
** scaled to [0, cap) (multiply-shift; cap is not a power of two). */
static inline size_t atab__home(uint64_t h, size_t cap)
{
    return (size_t)(((h & 0xffffffffu) * (uint64_t)cap) >> 32);
}

#define ATAB__TOMB ((uint64_t)2)

static inline int atab__slot_live(uint64_t s)
{
    return s != 0 && s != ATAB__TOMB;
}

static inline const atab_atom *atab__slot_atom(uint64_t s)
{
    if (s & 1)
        s &= UINT64_C(0x0000fffffffffffe);
    return (const atab_atom *)(uintptr_t)s;
}

struct atab_table {
    atab__shard shards[ATAB__SHARDS];
    int sweeping;               /* readers must wait (atomic; own line) */
    char pad_[60];
    atab_allocator alloc;
    uint64_t seed;
    uint64_t id;                /* unique per table, never reused */
    size_t sweep_threshold;
    size_t memory_limit;        /* 0: none */
    size_t bytes;               /* requested bytes in use (atomic) */
    size_t unused;              /* estimate of atoms at zero (atomic) */
    int self_sweep;             /* a release-triggered sweep runs (atomic) */
    int full_scan;              /* a candidate was lost: scan all (atomic) */
    size_t misuse;              /* atoms found over-released, pinned */
    size_t static_maxlen;       /* longest static atom, 0 with no sets */
    const atab_static_set **sets;
    size_t n_sets;
    size_t handles;             /* outstanding external handles (atomic) */
    int closing;                /* atab_table_free was called (atomic) */
    void *host_cache;           /* external.c's cache, or NULL */
    void *raw;                  /* the allocation holding this (aligned) table */
    pthread_mutex_t reg_lock;   /* the list of records */
    pthread_mutex_t sweep_lock; /* one sweep (or stop) at a time */
    pthread_mutex_t cand_lock;  /* cands, and locked-path releases */
    atab__vec cands;            /* candidates from the locked path */
    atab__rec *recs;            /* per-thread records */
    atab_table *next_table;     /* the list of live tables (thread.c) */
};

/* Could this set hold these bytes? Its miss filter's bit (static_hash.h):
** a clear bit means no slot of the set holds them, known without hashing. */
static inline int atab__set_may_hold(const atab_static_set *set, const char *s, size_t len)
{
    uint32_t bit = atab__static_filter_bit(s, len, set->filter_log2);
    return (int)((set->filter[bit >> 6] >> (bit & 63)) & 1);
}

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

/* The table object's allocation: room to align it to a cache line. */
#define ATAB__TABLE_ALLOC (sizeof(atab_table) + 63)

/* Frees everything; atab_table_free calls it unless handles are out. */
ATAB__HIDDEN void atab__table_destroy(atab_table *t);

/* ---- external handles and the host cache (external.c) ---- */

/* atab_table_free's first half: drops the host cache, sweeps, marks the
** table closing. 0: no handle is out and the caller must destroy the
** table now; 1: handles are out, the last atab_external_release will. */
ATAB__HIDDEN int atab__external_close(atab_table *t);
/* For the reporter: fn(ud, block, bytes) for the host cache's blocks (an
** atab__array_fn); safe from any thread. */
ATAB__HIDDEN void atab__external_visit_memory(atab_table *t,
                                              void (*fn)(void *, const void *, size_t),
                                              void *ud);

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
/* The blocks of the per-thread records and sweep candidate lists (thread.c);
** stops readers for a pass over the threads, not the table. */
ATAB__HIDDEN void atab__threads_visit_memory(atab_table *t, atab__array_fn fn, void *ud);
/* Moves cached deltas into the atoms' counts, so atab__count is exact. */
ATAB__HIDDEN void atab__flush_counts(atab_table *t);

/* ---- read-side sections, inline (thread.c has the slow half) ---- */

static inline uint64_t *atab__rec_seq(atab__rec *r)
{
    return &r->seq;
}

/* atab__enter's common case, with no call: NULL when the thread must take
** the slow half (atab__enter_slow) instead. */
static inline atab__rec *atab__enter_fast(atab_table *t)
{
#ifndef ATAB_DEBUG
    if (ATAB__LIKELY(atab__tls_last.id == t->id)) {
        atab__rec *r = atab__tls_last.rec;
        uint64_t *seq = atab__rec_seq(r);
        __atomic_store_n(seq, *seq + 1, __ATOMIC_RELAXED);
        if (__atomic_load_n(&atab__membarrier_state, __ATOMIC_RELAXED) > 0)
            __atomic_signal_fence(__ATOMIC_SEQ_CST);
        else
            __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (ATAB__LIKELY(!__atomic_load_n(&t->sweeping, __ATOMIC_ACQUIRE)))
            return r;
        __atomic_store_n(seq, *seq + 1, __ATOMIC_RELEASE);   /* step out */
    }
#else
    (void)t;
#endif
    return NULL;
}

static inline atab__rec *atab__enter(atab_table *t)
{
    atab__rec *r = atab__enter_fast(t);
    return ATAB__LIKELY(r != NULL) ? r : atab__enter_slow(t);
}

static inline void atab__leave(atab__rec *r)
{
    uint64_t *seq = atab__rec_seq(r);
    __atomic_store_n(seq, *seq + 1, __ATOMIC_RELEASE);
}
/* Takes a reference in the thread's cache: the common case inline. */
static inline void atab__ref_cached(atab_table *t, atab__rec *r, const atab_atom *a)
{
    atab__ent *e = atab__rec_find(r, a);
    if (ATAB__LIKELY(e && e->d < ATAB__DELTA_MAX - 1))
        e->d++;
    else
        atab__rec_ref(t, r, a);
}

/* Drops a reference in the thread's cache; inline while the atom stays in
** use by this thread's view, else the out-of-line path queues it. */
static inline void atab__release_cached(atab_table *t, atab__rec *r, const atab_atom *a)
{
    atab__ent *e = atab__rec_find(r, a);
    if (ATAB__LIKELY(e && atab__count(a) + e->d - 1 > 0))
        e->d--;
    else
        atab__rec_release(t, r, a);
}

#endif /* ATAB_INT_H */
