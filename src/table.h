/* SPDX-License-Identifier: MIT */
/*
** table.h - the table object (made and freed by life.c) and its slot
** arrays (table.c): layout, encoding and decoding of slots and control
** bytes, side by side.
**
** The table is ATAB__SHARDS shards, each an array of slots in groups of 16
** under its own lock. Writers (inserts, sweeps, rebuilds) hold the shard's
** lock; readers probe without it, inside a read-side section (thread.h).
**
** One array is one block of groups, each 16 control bytes then its 16
** 8-byte slots (144 bytes: a probe's control bytes and slots are near). A control byte is CTRL_EMPTY, CTRL_DELETED or, for a
** full slot, 7 bits of the key's hash; a probe reads a group's 16 control
** bytes as two words and tests 8 at once (SWAR), so it touches one slot
** per likely match.
** A full slot holds the atom's address with 16 more bits of the hash in its
** top bits, checked before the atom is read.
**
** Two choices. A key has two home groups, A and B; an insert takes A
** while A has a free slot, else B, so a group that still has an empty
** slot has sent no key on to B (and keeps its empty slots until its
** array is rebuilt: atab__erase), and a probe reads A, then B only when A
** has no empty slot, and stops there. When both are full the array grows instead; only where
** it cannot does a key go past B (linearly, to the first free slot), and
** the array's word then says so (ATAB__ARR_OVERFLOW): probes of that array
** go on past B to the first group with an empty slot. Every key costs one
** or two group reads, however full the table or however many slots sweeps
** left deleted.
**
** The 64-bit hash h is split: bits 58-63 the shard, 51-57 the control
** byte, 35-50 the slot tag; groups A and B are two halves of bits 35-63
** times one odd constant, each scaled to the group count (not a power of
** two: arrays are sized to allocator size classes). A full slot and its
** control byte thus keep every bit that places its key (atab__slot_hash):
** arrays grow and keys move without reading an atom. Bits 0-34 are left
** to the threads' caches (thread.h).
*/
#ifndef ATAB_TABLE_H
#define ATAB_TABLE_H

#include <pthread.h>

#include "static.h"
#include "thread.h"

#define ATAB__SHARD_BITS 6
#define ATAB__FENCED UINT64_MAX   /* fast_id of a table whose readers must fence */
#define ATAB__SHARDS (1u << ATAB__SHARD_BITS)

/* ---- arrays: groups of 16 control bytes and 16 slots ---- */

#define ATAB__GROUP 16       /* slots in a group */
#define ATAB__GROUP_BYTES 144

typedef struct atab__arr {
    uint8_t *base;      /* the block */
    size_t ngroups;
    int overflow;       /* some key sits past its two groups */
} atab__arr;

static inline uint8_t *atab__group_ctrl(atab__arr v, size_t g)
{
    return v.base + g * ATAB__GROUP_BYTES;
}

static inline uint64_t *atab__slot_ptr(atab__arr v, size_t i)
{
    return (uint64_t *)(void *)(atab__group_ctrl(v, i / ATAB__GROUP) + ATAB__GROUP) +
           i % ATAB__GROUP;
}

/* ---- control bytes ---- */

#define ATAB__CTRL_EMPTY 0x80u
#define ATAB__CTRL_DELETED 0xfeu

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

/* A key's place: its home groups are functions of the bits of h that its
** slot keeps (bits 35-63: the shard, the control byte and the tag), mixed
** by one multiply, so a rebuild or a kick finds a key's groups from its
** slot and control byte alone, reading no atom and hashing no key. */
static inline uint64_t atab__h_place(uint64_t h)
{
    return (h >> 35) * UINT64_C(0x9e3779b97f4a7c15);
}

/* The home groups of h among n groups (multiply-shift of 32 bits of its
** place: the high half for A, the low half for B). */
static inline size_t atab__h_group(uint64_t h, size_t ngroups)
{
    return (size_t)(((atab__h_place(h) >> 32) * (uint64_t)ngroups) >> 32);
}

static inline size_t atab__h_group2(uint64_t h, size_t ngroups)
{
    return (size_t)(((atab__h_place(h) & 0xffffffffu) * (uint64_t)ngroups) >> 32);
}

/* Control word k (slots 8k to 8k+7) as a little-endian word: byte i is
** slot 8k+i. */
static inline uint64_t *atab__ctrl_word_ptr(atab__arr v, size_t k)
{
    return (uint64_t *)(void *)(atab__group_ctrl(v, k / 2) + 8 * (k % 2));
}

static inline uint64_t atab__ctrl_word(atab__arr v, size_t k)
{
    uint64_t w = __atomic_load_n(atab__ctrl_word_ptr(v, k), __ATOMIC_ACQUIRE);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

/* What a group's control bytes say, one bit a slot (bit i: slot i). */
typedef struct atab__group {
    uint32_t match;   /* control byte equal to the key's */
    uint32_t empty;   /* CTRL_EMPTY */
    uint32_t free;    /* CTRL_EMPTY or CTRL_DELETED */
} atab__group;

#if defined(__SSE2__) && !defined(ATAB_NO_SIMD)   /* ATAB_NO_SIMD: the portable path, for tests */
#include <emmintrin.h>

/* Group g's 16 control bytes, compared 16 at a time. Writers store a
** control byte at a time (atab__set_ctrl), so one 16-byte load sees
** each byte either before or after a store, which is all a probe needs;
** ThreadSanitizer builds read the two words as atomics, as it can check. */
static inline atab__group atab__group_read(atab__arr a, size_t g, unsigned c)
{
#if defined(__SANITIZE_THREAD__)
    __m128i v = _mm_set_epi64x((long long)atab__ctrl_word(a, 2 * g + 1),
                               (long long)atab__ctrl_word(a, 2 * g));
#else
    __m128i v = _mm_load_si128((const __m128i *)(const void *)atab__group_ctrl(a, g));
    __atomic_signal_fence(__ATOMIC_ACQUIRE);   /* the slot loads stay after it */
#endif
    __m128i key = _mm_set1_epi64x((long long)(c * UINT64_C(0x0101010101010101)));
    atab__group r;
    r.match = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, key));
    r.empty = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8((char)0x80)));
    r.free = (uint32_t)_mm_movemask_epi8(v);   /* bit 7: empty or deleted */
    return r;
}
#else
#define ATAB__LSB8 UINT64_C(0x0101010101010101)
#define ATAB__MSB8 UINT64_C(0x8080808080808080)

/* Bit 8i+7 of a word's bytes, gathered into bit i. */
static inline uint32_t atab__msb_bits(uint64_t m)
{
    return (uint32_t)(((m >> 7) * UINT64_C(0x0102040810204080)) >> 56);
}

/* Per word (SWAR): bytes equal to c: the zero bytes of w ^ c*LSB8 (exact
** once carries are kept from crossing bytes); empty: 0x80 (bit 7 set,
** bit 1 clear); free: bit 7 set, bit 0 clear (0x80, 0xfe). */
static inline uint32_t atab__word_match(uint64_t w, unsigned c)
{
    uint64_t x = w ^ (ATAB__LSB8 * c);
    return atab__msb_bits(~(((x & ~ATAB__MSB8) + ~ATAB__MSB8) | x) & ATAB__MSB8);
}

static inline atab__group atab__group_read(atab__arr v, size_t g, unsigned c)
{
    uint64_t lo = atab__ctrl_word(v, 2 * g), hi = atab__ctrl_word(v, 2 * g + 1);
    atab__group r;
    r.match = atab__word_match(lo, c) | atab__word_match(hi, c) << 8;
    r.empty = atab__msb_bits(lo & ~(lo << 6) & ATAB__MSB8) |
              atab__msb_bits(hi & ~(hi << 6) & ATAB__MSB8) << 8;
    r.free = atab__msb_bits(lo & ~(lo << 7) & ATAB__MSB8) |
             atab__msb_bits(hi & ~(hi << 7) & ATAB__MSB8) << 8;
    return r;
}
#endif

/* ---- slots ---- */

/* A full slot: the atom's address (below 2^48: atom.c and table.c refuse
** blocks above, as no memory) with the hash's 16-bit tag in bits 48-63. */
#define ATAB__ADDR_MASK ((UINT64_C(1) << 48) - 1)

static inline uint64_t atab__slot_make(const atab_atom *a, uint64_t h)
{
    return atab__h_tag(h) << 48 | (uint64_t)(uintptr_t)a;
}

static inline const atab_atom *atab__slot_atom(uint64_t s)
{
    return (const atab_atom *)(uintptr_t)(s & ATAB__ADDR_MASK);
}

/* The bits of the hash that a full slot s of shard `shard` with control
** byte `ctrl` keeps: all that atab__h_group, atab__h_group2, atab__h_ctrl
** and atab__h_tag read. */
static inline uint64_t atab__slot_hash(unsigned shard, unsigned ctrl, uint64_t s)
{
    return (uint64_t)shard << 58 | (uint64_t)ctrl << 51 | (s >> 48) << 35;
}

static inline int atab__slot_may_match(uint64_t s, uint64_t h)
{
    return ((s ^ h << 13) >> 48) == 0;   /* bits 35-50 of h: the tag */
}

/* ---- arrays ---- */

/* An array's block is an allocator size class, (4 + m) << e bytes, given
** by its code e << 2 | m, holding as many groups as fit. The shard's `arr`
** word packs what a reader needs into one load, with no table to look up:
** the block's address (bits 4-47: blocks are 16-aligned), the group count
** (its low 16 bits in bits 48-63, its high 3 bits in bits 0-2) and the
** overflow flag (bit 3). Writers find the code again from the group count:
** a block is always the smallest class with its count of groups. A shard
** with no array points at atab__no_slots, one group of empty control bytes,
** so a probe needs no test for it. */
#define ATAB__MAX_CODE ((23 << 2) | 3)   /* 7 << 23 bytes: 407,779 groups */
#define ATAB__ARR_OVERFLOW UINT64_C(8)
#define ATAB__ARR_ADDR UINT64_C(0x0000fffffffffff0)

static inline size_t atab__code_bytes(unsigned code)
{
    return (size_t)(4 + (code & 3)) << (code >> 2);
}

/* Groups in a block of each code (ATAB__GROUP_BYTES each). */
extern ATAB__HIDDEN const uint32_t atab__code_groups[ATAB__MAX_CODE + 1];
extern ATAB__HIDDEN const uint64_t atab__no_slots[ATAB__GROUP / 8];

static inline uint64_t atab__arr_word(const void *base, size_t ngroups)
{
    return (uint64_t)(uintptr_t)base | (uint64_t)(ngroups & 0xffff) << 48 | (ngroups >> 16 & 7);
}

static inline atab__arr atab__arr_of(uint64_t word)
{
    atab__arr v;
    v.base = (uint8_t *)(uintptr_t)(word & ATAB__ARR_ADDR);
    v.ngroups = (size_t)((word << 16 | word >> 48) & 0x7ffff);   /* one rotate */
    v.overflow = (int)(word >> 3 & 1);
    return v;
}

/* The word of a shard with no array. */
static inline uint64_t atab__no_arr(void)
{
    return atab__arr_word(atab__no_slots, 1);
}

static inline size_t atab__arr_cap(atab__arr v)
{
    return v.ngroups * ATAB__GROUP;
}

static inline uint64_t atab__load_slot(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* Is slot i of an array full? */
static inline int atab__slot_full(atab__arr v, size_t i)
{
    return !((atab__ctrl_word(v, i / 8) >> (8 * (i % 8) + 7)) & 1);
}

/* ---- the table ---- */

/* Replaced arrays the table keeps for the next grace period, and the
** largest it keeps (larger ones, rare, and every one of a table with a
** memory limit, wait for a grace period of their own): at most 32 x 64 KiB
** waiting. */
#define ATAB__RETIRED_MAX 32
#define ATAB__RETIRED_BYTES 65536

/* A shard's writers' state, on lines that lock-free readers never read:
** they find the slot array by t->arrs[], a read-mostly array. A line of
** its own each, so that writers of two shards never pass one line between
** their cores. */
typedef struct atab__shard {
    atab__lock lock;
    uint32_t limit;    /* full slots its array takes before an insert grows it */
    uint64_t *arr;     /* its array's word, &t->arrs[i]: written under the lock */
    uint32_t used;     /* full slots: dynamic atoms + cached static atoms */
    uint32_t statics;  /* cached static atoms among `used` */
    uint64_t holds;    /* times the lock was dropped (atab__shard_drop; atomic): an
                          insert whose lock-free probe read it, and finds it unchanged
                          under the lock, trusts what that probe saw */
} __attribute__((aligned(64))) atab__shard;

struct atab_table {
    /* What every hit reads, on lines only rebuilds write. */
    uint64_t arrs[ATAB__SHARDS];   /* each shard's array: block address, group
                                      count and overflow flag (atab__arr_word),
                                      or atab__no_arr() (atomic) */
    atab__hkeys hkeys;          /* the seed's keys for short keys' hash */
    uint64_t fast_id;           /* id while readers need no fence of their own
                                   (membarrier), else ATAB__FENCED, which no
                                   thread's last record has: the hit path's check */
    uintptr_t key_page_mask;    /* ATAB__PAGE_MASK where a short key may be read by
                                   a load that starts before it, else 0 (intern.c) */
    uint64_t id;                /* unique per table, never reused */
    uint64_t seed;
    atab_allocator alloc;
    size_t sweep_threshold;
    size_t memory_limit;        /* 0: none */
    uint32_t checked_refs;      /* ATAB_CHECKED_REFS: caches keep no spares */
    uint32_t zero_batch;        /* zeros a record gathers before adding them */
    uint32_t queue_cap;         /* atoms on a thread's queue before it sweeps them;
                                   0: no queues */
    uint32_t pend_cap;          /* room for atoms a queue sweep left waiting for a
                                   grace period (thread.h: atab__pend): queue_cap,
                                   or 0 with a memory limit (sweep.c) */
    uint32_t prefetchw;         /* the CPU has PREFETCHW (base.h: atab__prefetch_w) */
    size_t static_maxlen;       /* longest static atom, 0 with no sets */
    const uint64_t *filter0;    /* sets[0]'s miss filter, or one word of 0 */
    uint32_t filter0_shift;     /* 32 less its log2 (31 for the word of 0) */
    const atab_static_set **sets;
    size_t n_sets;
    void *host_cache;           /* external.c's list of host caches, or NULL */
    void *raw;                  /* the allocation holding this (aligned) table */
    /* The solo thread (below, "the solo thread"): the address of its
    ** atab__tls_last (ATAB__SOLO_UNCLAIMED or ATAB__SOLO_REOPENED while
    ** none; NULL while ended), and its record (written under reg_lock;
    ** atomic); how many times it passed to another thread (reg_lock). */
    const void *solo_tid;
    atab__rec *solo_rec;
    uint32_t solo_moves;
    uint32_t fence_served;      /* fast_id is ATAB__FENCED, and the readers that
                                   entered sections with no fence before it was
                                   have passed a barrier since (atomic; grace.c) */
    /* What writers write. */
    atab__shard shards[ATAB__SHARDS] __attribute__((aligned(64)));
    size_t bytes __attribute__((aligned(64)));   /* requested bytes in use but the
                                                    shards' (atomic) */
    size_t unused;              /* estimate of atoms at count 0 (atomic) */
    uint64_t frees;             /* frees of unlinked atoms begun (atomic; sweep.c):
                                   bumped before any such atom is freed */
    uint64_t gp_begun;          /* grace periods begun (atomic: atab__gp_snap) */
    uint64_t gp_served;         /* the largest ticket + 1 of those ended (atomic) */
    size_t misuse;              /* atoms found over-released, kept (atomic); and
                                   the records' (thread.h) */
    size_t sweeps;              /* full sweeps begun and ended: odd while one
                                   runs (sweep_lock; atomic for atab_foreach) */
    size_t hstate;              /* handles << 1 | closing (atomic; life.c) */
    atab__lock retired_lock;    /* n_retired and retired[] */
    uint32_t n_retired;         /* (atomic reads, a hint outside the lock) */
    uint64_t retired[ATAB__RETIRED_MAX];   /* array words that growing shards
                                              replaced and readers may still
                                              probe: freed after the next
                                              grace period (sweep.c) */
    pthread_mutex_t chunk_lock; /* the chunks: directory, counts, `shared` (chunk.h) */
    uintptr_t *chunks;          /* the chunks' addresses, ascending */
    uint32_t n_chunks, cap_chunks;
    uint32_t n_empty;           /* chunks seen emptied since the last purge (a hint;
                                   atomic stores under chunk_lock: atab__chunks_purge
                                   reads it first without the lock) */
    atab__bump shared;          /* the current chunk of threads without a record */
    atab_atom *free_blocks[ATAB__CHUNK_CLASSES];   /* blocks freed back to their
                                                      chunks, by size class */
    atab__pool *pools;          /* the pools of small slot arrays (chunk.h) */
    pthread_mutex_t sweep_lock; /* one sweep at a time */
    pthread_mutex_t reg_lock;   /* the list of records */
    atab__rec *recs;            /* per-thread records (thread.c) */
    uint32_t flush_held;        /* a full sweep holds every record's flush_req,
                                   a new record's too, until its kills are done
                                   (reg_lock; thread.c: atab__flush_counts) */
    atab_table *next_table;     /* the live tables (thread.c, for fork) */
    uint32_t forking;           /* a fork is under way: no queue goes away for a
                                   sweep or is made (atomic; thread.c, "fork") */
    uint32_t growths_freeing;   /* growths that dropped their shard's lock and
                                   have yet to retire or free the array they
                                   replaced (atomic; table.c): a fork waits
                                   until it is 0 (thread.c, "fork") */
};

/* The table object's allocation: room to align it to a cache line. */
#define ATAB__TABLE_ALLOC (sizeof(atab_table) + 63)

/* Grace periods served. Called after some atoms were unlinked (their
** locks dropped), atab__gp_snap returns a number; atab__gp_served(t, s)
** is non-zero once a grace period that began after that call has ended,
** whoever ran it: then no reader can still hold what was unlinked before
** it. t->gp_begun counts the grace periods begun (each takes a ticket T
** before its fence), t->gp_served is the largest T + 1 of those ended. */
static inline uint64_t atab__gp_snap(atab_table *t)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);   /* the unlinks before the read */
    return __atomic_load_n(&t->gp_begun, __ATOMIC_RELAXED);
}

static inline int atab__gp_served(atab_table *t, uint64_t snap)
{
    return __atomic_load_n(&t->gp_served, __ATOMIC_ACQUIRE) > snap;
}

/* ---- writing a shard (its lock held): table.c's inserts, sweep.c's sweeps ---- */

static inline atab__shard *atab__shard_of(atab_table *t, uint64_t h)
{
    return &t->shards[atab__h_shard(h)];
}

/* The solo thread. The first thread to take a shard's lock on a table,
** with a record on it, becomes its solo thread (solo.c): its short-key
** inserts whose probe's hold count still stands, and whose shard's lock
** is free, put their atom into the room seen with no lock (intern.c:
** insert_block), counting the hold as a drop does. Such a solo insert
** raises its record's solo_busy, then (atab__solo_fence: membarrier makes
** the writer fence, so a claim needs it) sees t->solo_rec still its own
** and the lock's word 0, and lowers solo_busy after its stores. That first
** claim needs no fence: until it, every lock taken was dropped unwritten
** (below).
**
** Every thread, once it has a shard's lock, reads solo_tid again
** (atab__shard_take). Another thread's, or none claimed, and it drops the
** lock, writing nothing, and meets the bias under reg_lock: it takes the
** bias over, at most ATAB__SOLO_MOVES times in a table's life, if it has
** a record there (and the kernel membarrier); else it ends the bias (as a
** thread with no record, or one its slots no longer name, does). Both
** clear solo_rec, fence as a grace period's writer does, and wait while
** the old record's solo_busy is up; an end then clears solo_tid. Should
** membarrier fail once the bias is claimed, that fence is the writer's
** own, which the solo inserts' compiler fence does not pair with: the
** writer then passes the fallback fence (grace.c) before it trusts
** solo_busy, and ends the bias for good (no claim without membarrier). A new
** solo thread stores solo_tid before that fence, so a lock taken before
** the fence is seen by its solo inserts (the lock's word), and one taken
** after it reads the new solo_tid and is dropped. A fork from another
** thread ends the bias (thread.c, "fork"). So a lock's holder never meets
** a solo insert, and the hold counts (below) stay exact; nothing waits
** for a section.
**
** When the solo thread gives its record back (its exit), the table is
** unclaimed again, and a claim needs no fence: a lock still held was
** taken before the fence of that thread's own claim or move, which made
** it seen. When a thread gives its record back while the bias is ended
** and leaves one record or none on the table, the table is reopened: a
** claim then fences as a move does, since a lock may be held by a thread
** that took it while the bias was ended. A forked child, one thread, is
** unclaimed unless its thread is the solo thread. Hits, lookups and
** releases of other threads leave the bias alone: they take no lock (but
** for a lookup that caches a static atom in its shard, table.c:
** find_or_insert_locked, and a release that fills its thread's queue,
** whose sweep takes the locks). What reads a whole table under its
** shards' locks (atab_count, atab_get_stats, atab_foreach, the reports,
** atab_gc) meets the bias as any lock's taker does. */
/* solo_tid's two marks, distinct addresses (one array, so that no
** merging of constants makes them one): no solo thread yet, or none since
** the solo thread's exit (a claim needs no fence); none, the bias ended
** before (a claim fences). */
extern ATAB__HIDDEN const char atab__solo_marks[2];
#define ATAB__SOLO_UNCLAIMED ((const void *)&atab__solo_marks[0])
#define ATAB__SOLO_REOPENED ((const void *)&atab__solo_marks[1])
#define ATAB__SOLO_MOVES 4   /* times the bias may pass to another thread */

/* The solo insert's fence between its raise of solo_busy and its check of
** solo_rec, and a lock taker's between its take and its read of solo_tid:
** none (but the compiler's) where a claim needs membarrier,
** whose writer's fence serves it; a full one in builds that never use
** membarrier, where any thread may claim. */
static inline void atab__solo_fence(void)
{
#if ATAB__NEVER_MEMBARRIER
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#else
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
#endif
}
ATAB__HIDDEN void atab__solo_retake(atab_table *t, atab__shard *sh);
/* Record r leaves t, off its list (reg_lock held): the table is unclaimed
** if r was its solo thread's, reopened if the bias is ended and one record
** or none is left. */
ATAB__HIDDEN void atab__solo_leave(atab_table *t, const atab__rec *r);
/* Before a fork takes t's locks (reg_lock held): another thread's bias
** ends; an unclaimed table stays so. */
ATAB__HIDDEN void atab__solo_fork(atab_table *t);
/* In a forked child, every lock held by its one thread: unclaimed, unless
** that thread is the solo thread. */
ATAB__HIDDEN void atab__solo_child(atab_table *t);

/* Takes and drops a shard's lock. Each drop counts the hold in sh->holds,
** after the hold's writes; a thread that read `holds` before it read the
** shard's array word and probed, and finds the same count under the lock,
** knows that no slot of the shard was filled nor its array replaced since
** (every write to a shard is made under its lock, or by a solo insert,
** which counts as a hold). Under the lock, a solo_tid other than the
** caller's or NULL sends it to meet the bias first (atab__solo_retake). */
static inline void atab__shard_take(atab_table *t, atab__shard *sh)
{
    atab__lock_take(&sh->lock);
    atab__solo_fence();
    const void *solo = __atomic_load_n(&t->solo_tid, __ATOMIC_ACQUIRE);
    if (ATAB__UNLIKELY(solo && solo != (const void *)&atab__tls_last))
        atab__solo_retake(t, sh);
}

static inline void atab__shard_drop(atab__shard *sh)
{
    __atomic_store_n(&sh->holds, sh->holds + 1, __ATOMIC_RELEASE);
    atab__lock_drop(&sh->lock);
}

/* Is an array word a block of its own (not atab__no_slots)? */
static inline int atab__is_array(uint64_t word)
{
    return (word & ATAB__ARR_ADDR) != (uintptr_t)atab__no_slots;
}

/* Slots in a shard's array; 0 with none. */
static inline size_t atab__shard_cap(const atab__shard *sh)
{
    return atab__is_array(*sh->arr) ? atab__arr_cap(atab__arr_of(*sh->arr)) : 0;
}

ATAB__INLINE void atab__set_ctrl(atab__arr v, size_t i, unsigned byte)
{
    __atomic_store_n(atab__group_ctrl(v, i / ATAB__GROUP) + i % ATAB__GROUP, (uint8_t)byte,
                     __ATOMIC_RELEASE);
}

/* atab__erase of slot j of the locked group whose control bytes start at
** ctrl, given what the caller's read of that group under the lock says of
** its empty slots (has_empty): one store of its control byte. */
ATAB__INLINE void atab__erase_in_group(uint8_t *ctrl, unsigned j, int has_empty)
{
    __atomic_store_n(&ctrl[j], (uint8_t)(has_empty ? ATAB__CTRL_EMPTY : ATAB__CTRL_DELETED),
                     __ATOMIC_RELEASE);
}

/* Empties slot i. A probe stops at a group with an empty slot (probe.h),
** so a slot may become empty only in a group that has an empty slot
** still: such a group was never full since its array was built, so no key
** of it went on to its group B or past. In a group with none, the slot is
** marked deleted, for inserts to reuse. The slot keeps its old address
** until reused: readers that matched the old control byte still find the
** atom, which is freed only after a grace period. */
ATAB__INLINE void atab__erase_slot(atab__arr v, size_t i)
{
    size_t g = i / ATAB__GROUP;
    atab__erase_in_group(atab__group_ctrl(v, g), i % ATAB__GROUP,
                         atab__group_read(v, g, 0).empty != 0);
}

/* atab__erase_slot, counted off the shard's full slots. */
ATAB__INLINE void atab__erase(atab__shard *sh, atab__arr v, size_t i)
{
    atab__erase_slot(v, i);
    sh->used--;
}

/* Size classes and arrays (table.c): the code of an array word's block;
** the smallest code whose groups hold n full slots at the growth load;
** freeing an array word's block (none for atab__no_slots); moving a locked
** shard into a new array of a code (0: none), which returns the old word
** to free after a grace period, or UINT64_MAX when the allocation failed
** (benign: the shard keeps its array). */
ATAB__HIDDEN unsigned atab__code_of(uint64_t word);
ATAB__HIDDEN unsigned atab__code_for(size_t n);

/* The bytes of an array word's block. */
static inline size_t atab__arr_bytes(uint64_t word)
{
    return atab__code_bytes(atab__code_of(word));
}

ATAB__HIDDEN void atab__free_arr(atab_table *t, uint64_t word);
ATAB__HIDDEN uint64_t atab__rebuild(atab_table *t, atab__shard *sh, unsigned code);

/* Puts an array that a shard's rebuild replaced (a growing insert's, a
** sweep's shrink) on the table's retired list (sweep.c says when it is
** freed); 0 when it does not go there: the caller waits for a grace
** period of its own. */
ATAB__HIDDEN int atab__retire_array(atab_table *t, uint64_t word);
/* Empties the retired list into out[ATAB__RETIRED_MAX] before a grace
** period; how many it took. One that a racing grower adds after the hint
** is read waits for the next grace period. */
ATAB__HIDDEN size_t atab__retired_take(atab_table *t, uint64_t *out);

/* The byte counter of this thread's record on t (the record it used
** last), for atoms it allocates or frees (alloc.c); NULL without one. */
static inline size_t *atab__acct(const atab_table *t)
{
    return atab__tls_last.id == t->id ? &atab__tls_last.rec->bytes : NULL;
}

/* Could one of t's static sets hold these bytes? Only the sets' miss
** filters: no hashing, inline, so a lookup that misses the table and every
** set (most misses) pays a few loads and a multiply. */
static inline int atab__static_may_hold(const atab_table *t, const char *s, size_t len)
{
    if (len > t->static_maxlen)
        return 0;
    uint32_t mix = atab__static_filter_mix(s, len);   /* each set's bit: its top bits */
    if (atab__filter_has_bit(t->filter0, mix >> t->filter0_shift))
        return 1;
    for (size_t i = 1; i < t->n_sets; i++)
        if (atab__set_has_bit(t->sets[i], mix >> (32 - t->sets[i]->filter_log2)))
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

/* The hash of t for these bytes: the short keys' with the table's keys
** (equal to atab__hash_bytes with t's seed). */
static inline uint64_t atab__table_hash(const atab_table *t, const char *s, size_t len)
{
    return len <= ATAB__SHORT_KEY ? atab__hash_short_keyed(&t->hkeys, s, len)
                                  : atab__hash_bytes(t->seed, s, len);
}

static inline uint64_t atab__atom_hash(const atab_table *t, const atab_atom *a)
{
    return atab__table_hash(t, atab_chars(a), atab_len(a));
}

/* This thread's record on t: the one used last, else a lookup (NULL when
** none can be had: thread.h). */
ATAB__INLINE atab__rec *atab__rec_of(atab_table *t)
{
    if (ATAB__LIKELY(atab__tls_last.id == t->id))
        return atab__tls_last.rec;
    return atab__rec_find(t);
}

/* A release from the count, no thread's cache asked (the atom's
** characters hashed only when it is left unused, for this thread's queue:
** thread.h, atab__unref_counted), unless a cache ever kept spares of the
** atom: then as atab_release, through this thread's entry, so that a
** release that would take this thread's spares off the count is refused;
** and the sweeps it may start: ATAB_OK, or ATAB_EREFS (ATAB_EINVAL in
** debug builds for another table's atom), the error set. Never a static
** atom. */
ATAB__HIDDEN int atab__release_direct(atab_table *t, const atab_atom *a);

/* Under k's shard's lock (table.c): finds the key again, else a static
** atom (cached in the shard), else with `insert_new` a new atom; a dynamic
** atom found or made comes with a reference. NULL with the error set
** (ATAB_OK when a lookup found nothing). Called outside any section. */
ATAB__HIDDEN const atab_atom *atab__find_or_insert_locked(atab_table *t, const atab__key *k,
                                                          const char *u8, int insert_new);

/* Stores slot s for hash h in slot j of the group whose control bytes
** start at ctrl (a shard's lock held): the slot first, then its control
** byte, so a reader that sees the byte sees the slot. */
ATAB__INLINE void atab__put_at(uint8_t *ctrl, size_t j, uint64_t s, uint64_t h)
{
    __atomic_store_n((uint64_t *)(void *)(ctrl + ATAB__GROUP) + j, s, __ATOMIC_RELEASE);
    __atomic_store_n(ctrl + j, (uint8_t)atab__h_ctrl(h), __ATOMIC_RELEASE);
}

/* Notes atom a of hash h, which r's insert made just now, in r for its
** release (thread.h: made); returns a. */
ATAB__INLINE const atab_atom *atab__made_by(atab__rec *r, const atab_atom *a, uint64_t h)
{
    r->made = a;
    r->made_h = h;
    r->made_frees = __atomic_load_n(&r->t->frees, __ATOMIC_RELAXED);
    return a;
}

/* Where a short key's lock-free probe that missed saw room for it: its
** group's control bytes' address (16-aligned) | the slot's index in the
** group, the free slot of group A, else of group B; 0 for none. */
static inline uintptr_t atab__room(const uint8_t *ctrl, uint32_t free)
{
    return (uintptr_t)ctrl | (unsigned)__builtin_ctz(free);
}

/* The ways of an intern's insert of a short UTF-8 key s (1 to
** ATAB__SHORT_KEY bytes, hash h: intern.c) that go past its common one,
** called outside any section: the locked way, which finds the key again,
** else inserts `made` (NULL: an atom it makes; freed when not used); and,
** with the shard's lock held and atom na made, the insert after the hold
** count moved since the key's probe: the probe of groups A and B again
** under the lock, else the locked way, which notes na in r when it is the
** key's (atab__made_by). Both return the key's atom, with a reference, or
** NULL (error set). */
ATAB__HIDDEN const atab_atom *atab__insert_short_locked(atab_table *t, const char *s,
                                                        size_t len, uint64_t h,
                                                        atab_atom *made);
ATAB__HIDDEN const atab_atom *atab__insert_made_locked(atab__rec *r, atab__shard *sh,
                                                       const char *s, size_t len, uint64_t h,
                                                       atab_atom *na);

/* Tables made and not yet freed in this process (atomic: life.c). */
extern ATAB__HIDDEN size_t atab__live_tables;
/* Is dynamic atom a, which the caller holds (a reference, or a handle), one
** of t's, not another table's? (table.c) */
ATAB__HIDDEN int atab__atom_of(atab_table *t, const atab_atom *a);

/* For the reporter: calls array_fn(ud, block, bytes) for each shard's slot
** array and fn(ud, atom) for each of its atoms, one shard at a time under
** that shard's lock (so an atom seen is not freed during the call), then
** array_fn for each retired array; an array of a pool is left to
** atab__chunks_visit, which visits the pool whole. */
typedef void (*atab__array_fn)(void *ud, const void *block, size_t bytes);
typedef void (*atab__visit_fn)(void *ud, const atab_atom *a);
ATAB__HIDDEN void atab__table_visit_shards(atab_table *t, atab__array_fn array_fn,
                                           atab__visit_fn fn, void *ud);

#endif /* ATAB_TABLE_H */
