/* SPDX-License-Identifier: MIT */
/*
** thread.h - per-thread records (thread.c): read-side sections that let
** lookups probe the table without locks (their grace periods: grace.c),
** and a small cache of spare references that keeps hot atoms' counts off
** shared cache lines.
**
** Sections. A record's `seq` is ATAB__SEQ_IN while its thread is inside a
** section and ATAB__SEQ_OUT outside: its owner stores the one or the other,
** reading nothing, so that no section waits on the store of the one before
** it; a waiter that finds a record inside marks it ATAB__SEQ_MARKED (a
** CAS), and the section it found has ended once the mark is gone.
** Whatever a writer unlinks (an atom a sweep killed, a slot array a rebuild
** replaced) it frees only after a grace period (atab__synchronize): once
** every record that was inside a section has left it (an array a grow
** replaced waits on the table's retired list for the next one: sweep.c).
** Entering costs a
** store and a compiler fence where the kernel has membarrier (the writer
** pays for the fence), a full fence elsewhere (the hit path tells which by
** the table's fast_id, table.h). Nothing ever waits for a
** writer: sections are never held up, and no lock is taken inside one.
**
** Spare references. An atom's count includes the references the caches
** hold in reserve (atom.h), so the count alone decides whether an atom is
** unused, without looking at any cache. The cache is found by the key's
** hash, so a hit looks there before it probes the table, and takes a spare
** from the entry that names its atom; a release keeps the reference as a
** spare in that entry (creating it): hits and releases of the same atoms
** write nothing shared, however many threads make them. A hit with no
** spare takes references from the count (one CAS: one, or a batch of
** spares when the entry is the atom's already). Spares come back to
** the counts when an entry is evicted, when the thread exits, and when a
** flush asks for them (every sweep, reports): a flusher raises the
** record's flush_req, after which the owner leaves its cache alone and
** works on the counts directly until the flusher is done (but for a
** release, which first takes the spares its entry for the atom may still
** hold, with a CAS against the flusher's exchange, so that the count it
** checks the release against holds them: thread.c, unref_held), so
** flushing never waits on the owner either, beyond the section it is in.
**
** Queues. A thread that brings an atom's count to 0 puts it on its queue
** (atom.h: QUEUED). When the queue is full, the thread sweeps it after the
** section (sweep.c): under each atom's shard lock, an atom still at 0 is
** killed and unlinked (unless a cache ever kept spares of it: atom.h,
** SPARED; it is taken off, counted for a full sweep), one that was
** revived is only taken off; the dead are freed after a grace period
** (their blocks kept: below), which the sweep runs itself only when no
** thread has run one since its last sweep (sweep.c: the batch it unlinked
** waits in the queue's block till then). Unused atoms
** are freed by the threads that left them unused, a batch at a time, while
** they are still in their caches, and no thread waits for another's
** garbage. A queue is the owner's, or a flusher's while it holds the
** record; to sweep it, the owner takes it away (in a section) and puts it
** back after (or, finding a flusher holding the record then, frees it
** with its blocks: nothing is left where no flush or report looks), and a
** full sweep's flusher empties and frees whatever queue a record holds.
** While a queue is away, what its sweep unlinked (atoms, shrunk arrays)
** and the block itself are in its thread's hands alone, as a new queue's
** block is until its record has it: a fork waits until every queue away
** has come back and every new one is its record's (r->away), and no queue
** goes away or is made while a fork is under way (t->forking), so a
** child, where that thread is not, never has one away (thread.c, "fork").
**
** Recycled blocks. The carved atoms a queue sweep frees stay with its
** thread, as blocks kept by size class (chunk.h) in the queue's own block,
** for its next new atoms of those classes; the next queue sweep gives
** those no new atom took back to their chunks (on a table with a memory
** limit none is kept: they go back to their chunks at once, so that no
** block one thread keeps refuses another thread's atom). They go where the
** queue goes: the owner's in a section while no flusher holds the record,
** the sweep's while it has the queue away, and given back with the queue.
**
** Chunks. A record's bump (chunk.h) is its thread's alone: only the owner
** carves from it (an insert, outside sections: a short key's before it
** takes the shard's lock, any other under it); it is
** retired when the record goes (thread exit, fork's child for the threads
** that did not come along); a table's free frees every chunk.
*/
#ifndef ATAB_THREAD_H
#define ATAB_THREAD_H

#include "chunk.h"

#define ATAB__CACHE_SIZE 1024   /* entries: sets of ATAB__CACHE_WAYS by the key's hash */
#define ATAB__CACHE_WAYS 2
/* An entry is one word: the atom's address (bits 2-47: atoms are 4-aligned,
** dynamic ones below 2^48: atom.c checks), the spares it holds in bits
** 48-58, 5 bits of its hash in bits 59-63 (atab__ent_tag), bit 1 set once
** a release through it has left the atom with no holder (counted towards
** t->unused once per entry, as a sweep candidate), bit 0 set for a static
** atom (which needs no spares: it is never freed; its entry shows
** ATAB__STATIC_SPARES, taken as any, which go nowhere). 0 is a free entry.
** An entry is found by the hash of the atom's characters, in the two ways
** of the set it names (16 bytes, one line), the one used last first (way
** 0): a hit in way 1, and a new entry, move to way 0, and a new entry
** pushes way 0's to way 1, whose own goes (its spares back to its count).
** An atom has at most one entry in a record. A key that way 0 did not
** match is compared with way 1's atom only where their hash bits agree.
** So a hit finds its atom there before it probes the table: an entry with
** spares (or a static one) keeps its atom alive, so its characters may be
** read and compared with the key; an entry without is only an address,
** never read through. A hit that finds its atom in the table with no spare
** in the entry takes ATAB__SPARE_TAKE references with one CAS when the
** entry is the atom's already (its second hit in a row there), else one.
**
** An entry keeps spares only while the count says someone else holds the
** atom too, or the caller's reference came with them, so a release of a
** reference nobody holds is seen at once (the count is at this thread's
** spares) unless another thread still holds one or keeps spares. A double
** release that takes another thread's spares leaves the count below them,
** which nothing legitimate does (every count holds every cache's spares
** for its atom), and at 0 (it drops all it can see): that thread's next
** take of a spare checks for a count at 0 (atab__counted: the atom's
** header, which the key compare has just read), and a queue sweep never
** kills an atom a cache has kept spares of (atom.h: SPARED), which waits
** for a full sweep, whose flush gives every entry's spares back first
** (refused there, and counted, when the count is short): no entry with
** spares ever names a freed atom.
**
** An entry without spares may outlive its atom: a full sweep flushes each
** record before it kills, and in between the record's thread may make an
** entry for an atom whose last reference another thread then drops. A new
** atom made later at that address (same set, so most often the same key)
** is then named by an entry that was not made for it, and never marked.
** So SPARED is set by whatever gives an entry spares, not by the entry's
** making alone: make_entry, the refill of an entry with none
** (atab__ref_slow's CAS), and a release's spare (atab__spare_fits keeps
** one only in an entry of a marked atom; atab__unref_slow marks it).
** ATAB_CHECKED_REFS tables keep no spares of dynamic atoms (no entry is
** made for one). */
#define ATAB__ENT_ONE (UINT64_C(1) << 48)   /* one spare */
#define ATAB__ENT_ADDR UINT64_C(0x0000fffffffffffc)
#define ATAB__ENT_STATIC 1u
#define ATAB__ENT_ZERO 2u
#define ATAB__ENT_SPARES (UINT64_C(0x7ff) << 48)   /* the spares' bits */
#define ATAB__ENT_TAG (UINT64_C(0x1f) << 59)       /* the hash's bits */
#define ATAB__STATIC_SPARES 0x7ffu
#define ATAB__SPARE_MAX 1024u   /* spares an entry keeps from releases */
#define ATAB__SPARE_TAKE 32u    /* references a refill takes: the caller's and spares */

typedef struct atab__rec {
    uint64_t seq;             /* ATAB__SEQ_IN inside a section, ATAB__SEQ_OUT
                                 outside (the owner's stores), or
                                 ATAB__SEQ_MARKED (a waiter's CAS from IN) */
    uint32_t flush_req;       /* a flusher owns the cache (atomic) */
    int32_t zeros;            /* atoms this thread brought to 0, not yet in t->unused */
    uint32_t nq;              /* atoms on the queue */
    uint32_t sweep_due;       /* the queue is full, or missing: see to it (atomic) */
    uint32_t qcap;            /* t->queue_cap while `queue` is set, else 0 (written
                                 with it): a queue with room has nq < qcap */
    uint32_t away;            /* its queue is away for a sweep, or being made (the owner's stores;
                                 atomic): a fork waits for it to come back */
    uint32_t solo_busy;       /* its thread is in a solo insert (table.h; the owner's
                                 stores, atomic): the bias's end waits for it */
    const atab_atom **queue;  /* room for t->queue_cap atoms this thread left
                                 unused, or NULL: set by the owner in a section,
                                 freed by a full sweep's flusher (atomic) */
    const atab_atom *pending; /* the one atom queued while the queue is away */
    uint64_t pending_h;       /* its hash */
    size_t bytes;             /* atoms' bytes this thread allocated less freed, mod 2^64
                                 (only its thread writes it, and the step that takes
                                 the record off the table's list, which folds it into
                                 t->bytes; atomic loads and stores) */
    size_t misuse;            /* over-releases its hits found (as `bytes`) */
    atab_table *t;
    /* The atom this thread's insert of a short key made last (table.h:
    ** atab__made_by), its hash, and t->frees then: while t->frees stands
    ** there, no atom has been freed since, so an atom at that address is
    ** this one, and its release takes the hash from here (intern.c). */
    const atab_atom *made;
    uint64_t made_h;
    uint64_t made_frees;
    struct atab__rec *next;   /* the table's records (t->reg_lock) */
    struct atab__rec *tnext, **tprev;   /* the owner's records (g_lock) */
    void *raw;                /* the allocation holding this aligned record */
    atab__bump bump;          /* its current chunk: its thread's (chunk.h) */
    uint64_t e[ATAB__CACHE_SIZE] __attribute__((aligned(16)));   /* each set on one line */
} __attribute__((aligned(64))) atab__rec;

/* The record this thread used last, for the one-compare fast path. */
typedef struct atab__tls_pair {
    uint64_t id;
    atab__rec *rec;
} atab__tls_pair;
extern ATAB__HIDDEN _Thread_local atab__tls_pair atab__tls_last ATAB__TLS;   /* grace.c */

/* This thread's records on the tables it used last, beside atab__tls_last
** (grace.c; thread.c: atab__rec_find fills them). */
#define ATAB__TLS_SLOTS 8
extern ATAB__HIDDEN _Thread_local atab__tls_pair atab__tls_slots[ATAB__TLS_SLOTS] ATAB__TLS;

/* This thread's record on the table whose id is `id`, where its slots
** still name one (no lock, and none made); else NULL. */
static inline atab__rec *atab__rec_known(uint64_t id)
{
    if (atab__tls_last.id == id)
        return atab__tls_last.rec;
    for (unsigned i = 0; i < ATAB__TLS_SLOTS; i++)
        if (atab__tls_slots[i].id == id)
            return atab__tls_slots[i].rec;
    return NULL;
}
extern ATAB__HIDDEN int atab__membarrier_state;   /* > 0: readers need no fence (grace.c) */

/* This thread's record on t when it is not the last one used (a first
** visit registers one); NULL when none can be had (no memory; debug builds,
** which count every reference on the atom), and the caller locks instead. */
ATAB__HIDDEN atab__rec *atab__rec_find(atab_table *t);

/* Builds that never use membarrier: TSan does not model the asymmetric
** fence; ATAB_NO_MEMBARRIER is the portable path (full fences on both
** sides), for tests. */
#if defined(__SANITIZE_THREAD__) || defined(ATAB_NO_MEMBARRIER)
#define ATAB__NEVER_MEMBARRIER 1
#else
#define ATAB__NEVER_MEMBARRIER 0
#endif

static inline void atab__reader_fence(void)
{
    if (__atomic_load_n(&atab__membarrier_state, __ATOMIC_RELAXED) > 0)
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
    else
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* x86-64 (outside TSan, which must see every access) reads a few of the
** hit path's words in the instruction that uses them: the flush flag, an
** atom's count bits. */
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__) && defined(__GCC_ASM_FLAG_OUTPUTS__)
#define ATAB__X86_HIT 1
#else
#define ATAB__X86_HIT 0
#endif

#define ATAB__SEQ_OUT 0u
#define ATAB__SEQ_IN 1u
#define ATAB__SEQ_MARKED 2u

/* Enters a read-side section on a record. */
static inline void atab__enter_rec(atab__rec *r)
{
    __atomic_store_n(&r->seq, ATAB__SEQ_IN, __ATOMIC_RELAXED);
    atab__reader_fence();
}

/* Enters a section where the caller saw t->fast_id match: membarrier
** makes the writers fence for it (grace.c: atab__writer_fence). */
static inline void atab__enter_rec_nofence(atab__rec *r)
{
    __atomic_store_n(&r->seq, ATAB__SEQ_IN, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* Leaves the section: a release store (a waiter's mark, if any, goes with
** it). */
static inline void atab__leave(atab__rec *r)
{
    __atomic_store_n(&r->seq, ATAB__SEQ_OUT, __ATOMIC_RELEASE);
}

/* Way 0 of the cache set of a key or atom of hash h (table.h: the table's
** hash of its characters); way 1 follows it. */
static inline uint64_t *atab__cache_slot(atab__rec *r, uint64_t h)
{
    /* the set's byte offset from the hash's low bits: no scaled index */
    size_t off = (size_t)(h << 4) & (ATAB__CACHE_SIZE / ATAB__CACHE_WAYS - 1) << 4;
    return (uint64_t *)(void *)((char *)r->e + off);
}

/* Makes way 1 of set e the one used last (way 0), and returns way 0. */
static inline uint64_t *atab__cache_promote(uint64_t *e)
{
    uint64_t x = e[1];
    e[1] = e[0];
    e[0] = x;
    return e;
}

static inline const atab_atom *atab__ent_atom(uint64_t e)
{
    return (const atab_atom *)(uintptr_t)(e & ATAB__ENT_ADDR);
}

static inline unsigned atab__spares(uint64_t e)
{
    return (unsigned)(e >> 48) & ATAB__STATIC_SPARES;
}

/* An entry's tag bits for hash h: its bits 9-13 (above the set's). */
_Static_assert(ATAB__CACHE_SIZE / ATAB__CACHE_WAYS == 1u << 9, "the tag starts at hash bit 9");
static inline uint64_t atab__ent_tag(uint64_t h)
{
    return (h << 50) & ATAB__ENT_TAG;
}

/* Does entry value x's tag agree with hash h? When not, its atom is not
** the key's, and the hit path reads no byte of it. The tag is the entry's
** top bits, so a shift keeps it alone. */
_Static_assert((~ATAB__ENT_TAG >> __builtin_ctzll(ATAB__ENT_TAG)) == 0, "the tag is the top bits");
static inline int atab__tag_agrees(uint64_t x, uint64_t h)
{
    __asm__("" : "+r"(h));   /* its shift made here and dropped: the hit path
                                then keeps no register more for it */
    return ((x ^ atab__ent_tag(h)) >> __builtin_ctzll(ATAB__ENT_TAG)) == 0;
}

/* The cache entry for a, of hash h, made way 0 of its set, or NULL. Inside
** a section only, and only while atab__cache_ours(r). */
static inline uint64_t *atab__cache_find(atab__rec *r, const atab_atom *a, uint64_t h)
{
    uint64_t *e = atab__cache_slot(r, h);
    if (atab__ent_atom(e[0]) == a)
        return e;
    return atab__ent_atom(e[1]) == a ? atab__cache_promote(e) : NULL;
}

/* May the owner use its cache in this section (no flusher holds it)? An
** acquire load (x86-64: the compare reads the flag, and the compiler
** fence keeps the cache's reads after it). */
static inline int atab__cache_ours(atab__rec *r)
{
#if ATAB__X86_HIT
    int zero;
    __asm__ volatile("cmpl $0, %1" : "=@ccz"(zero) : "m"(r->flush_req) : "memory");
    return zero;
#else
    return !__atomic_load_n(&r->flush_req, __ATOMIC_ACQUIRE);
#endif
}

/* Does entry value e keep its atom alive (spares, or a static atom's)? */
static inline int atab__ent_live(uint64_t e)
{
    return (e & ATAB__ENT_SPARES) != 0;
}

/* May way 1 of cache set e hold the atom of a key of hash h: is it live,
** with a tag that agrees with h? (Way 0 did not match the key.) */
static inline int atab__way1_may(const uint64_t *e, uint64_t h)
{
    uint64_t x = e[1];
    return atab__tag_agrees(x, h) && atab__ent_live(x);
}

/* atab__ent_live of the entry at e, whose value the caller has read as x:
** on x86-64, a test of its spares' bits in memory (so the hit path keeps
** no copy of x to shift). Inside a section only, while atab__cache_ours. */
static inline int atab__ent_live_at(const uint64_t *e, uint64_t x)
{
#if ATAB__X86_HIT
    int live;
    (void)x;
    __asm__("testw %2, %1" : "=@ccnz"(live)
            : "m"(((const uint16_t *)(const void *)e)[3]), "i"(ATAB__STATIC_SPARES));
    return live;
#else
    (void)e;
    return atab__ent_live(x);
#endif
}

/* Are dynamic atom a's count bits not 0 (a relaxed load and a test)? */
static inline int atab__counted(const atab_atom *a)
{
    int counted;
#if ATAB__X86_HIT
    __asm__("testl %2, %1" : "=@ccnz"(counted) : "m"(*atab__count_word(a)), "i"(ATAB__REF_COUNT));
#else
    counted = (__atomic_load_n(atab__count_word(a), __ATOMIC_RELAXED) & ATAB__REF_COUNT) != 0;
#endif
    return counted;
}

/* May a spare be taken from live entry value e of atom a? Not when a's
** count bits are 0: an over-release took the references the spares stand
** for (atab__ent_stale then; a saturated count, whose count bits may be 0
** too, is told apart there). */
static inline int atab__ent_usable(const atab_atom *a, uint64_t e)
{
    return (e & ATAB__ENT_STATIC) || atab__counted(a);   /* a static atom has no count */
}

/* The value of this thread's entry e read outside any section, for a hit
** of a static atom there (ATAB__ENT_STATIC), which needs none: a static
** atom is never freed, its entry's spares are never taken
** (atab__ent_take), and a flusher only ever makes an entry 0 (its store is
** atomic, as this load is). Any other value is read again in a section. */
static inline uint64_t atab__ent_peek(const uint64_t *e)
{
    return __atomic_load_n(e, __ATOMIC_RELAXED);
}

/* For a live entry *e whose atom's count bits are 0: 0 when the count is
** saturated (the spare may be taken), else -1 with the over-release
** counted (r->misuse) and the entry's spares dropped (they are gone from
** the count). Inside a section, while atab__cache_ours(r). */
ATAB__HIDDEN int atab__ent_stale(atab__rec *r, uint64_t *e);

/* A hit from the cache, inside a section, while atab__cache_ours(r): takes
** a spare of the dynamic atom at *e (atab__ent_live, atab__counted), whose
** characters the caller compared with its key. A static atom's entry is
** left as it is (atab__ent_take): its spares (ATAB__STATIC_SPARES) only
** keep it live. */
static inline void atab__ent_take_dyn(uint64_t *e, uint64_t x)
{
    *e = x - ATAB__ENT_ONE;
}

/* atab__ent_take_dyn, for an entry that may be a static atom's. */
static inline void atab__ent_take(uint64_t *e, uint64_t x)
{
    if (!(x & ATAB__ENT_STATIC))
        atab__ent_take_dyn(e, x);
}

/* Takes one reference on atom a of hash h, which the caller found in the
** table inside a section: a spare from the cache; else from the count,
** with spares for the entry when it is a's already; a static atom takes
** the entry. -1 when a sweep has killed the atom (it is absent). */
ATAB__HIDDEN int atab__ref_slow(atab_table *t, atab__rec *r, const atab_atom *a, uint64_t h);

static inline int atab__ref(atab_table *t, atab__rec *r, const atab_atom *a, uint64_t h)
{
    uint64_t *e = atab__cache_slot(r, h), x;
    if (ATAB__LIKELY(atab__cache_ours(r) && atab__ent_atom(x = *e) == a && atab__ent_live(x) &&
                     (atab__ent_usable(a, x) || atab__ent_stale(r, e) == 0))) {
        atab__ent_take(e, x);
        return 0;
    }
    return atab__ref_slow(t, r, a, h);
}

/* Drops one reference on dynamic atom a of hash h, inside a section: kept
** as a spare in the cache while others hold the atom too, else dropped
** from the count (with this thread's spares, when it was the last holder
** it can see). ATAB_OK; ATAB_EREFS for a release of a reference nobody
** holds; ATAB_EINVAL for another table's atom that others hold (found in
** no slot of t: it would become a spare here, or, in a checked table, leave
** the count); nothing changes on either error. */
ATAB__HIDDEN int atab__unref_slow(atab_table *t, atab__rec *r, const atab_atom *a, uint64_t h);

/* May a release keep its reference on a as a spare in a's entry, value x?
** Only while the count holds more than this thread's spares and the
** caller's reference: one cache alone never keeps alive an atom that
** nobody holds at the check (atab__unref_slow drops the last reference
** instead).
** Another cache's spares count here as a holder (the count cannot tell
** them apart), so two caches may keep spares of an atom nobody holds. It
** is then on no queue and not in t->unused until an eviction, a thread's
** exit or a flush gives the spares back; the next full sweep frees it, as
** it would have once queued (its entries marked it SPARED). Telling the
** two apart would cost every release a write to the count. And only while
** a is marked SPARED, which the entry's name alone does not promise (an
** entry may outlive its atom: above): atab__unref_slow marks it. SPARED is
** the bit above the count's, so one compare tests both; a saturated count
** (REF_PINNED, whose masked bits are 0) goes the slow way too. */
static inline int atab__spare_fits(const atab_atom *a, uint64_t x)
{
    uint32_t c = __atomic_load_n(atab__count_word(a), __ATOMIC_ACQUIRE) &
                 (ATAB__REF_SPARED | ATAB__REF_COUNT);
    return atab__spares(x) < ATAB__SPARE_MAX && c > ATAB__REF_SPARED + atab__spares(x) + 1;
}

/* atab__unref's common case: keeps the reference on dynamic atom a of hash
** h as a spare in its entry, inside a section. Non-zero when it did. */
static inline int atab__spare_keep(atab__rec *r, const atab_atom *a, uint64_t h)
{
    uint64_t *e = atab__cache_slot(r, h), x;
    if (ATAB__LIKELY(atab__cache_ours(r) && atab__ent_atom(x = *e) == a &&
                     atab__spare_fits(a, x))) {
        *e = x + ATAB__ENT_ONE;
        return 1;
    }
    return 0;
}

static inline int atab__unref(atab_table *t, atab__rec *r, const atab_atom *a, uint64_t h)
{
    if (ATAB__LIKELY(atab__spare_keep(r, a, h)))
        return ATAB_OK;
    return atab__unref_slow(t, r, a, h);
}

/* Size classes of the blocks a thread keeps (chunk.h). */
#define ATAB__RECYCLE_CLASSES ATAB__CHUNK_CLASSES

/* A queue's block: the heads of the atoms' lists by shard, for its sweep
** to take each shard's lock once (each an index + 1; 0: empty); then the
** queue proper, room for t->queue_cap atoms (r->queue points there); each
** atom's hash, stored when it is queued (its sweep finds shards and slots
** by them, and hashes no key), whose low 16 bits, which neither shards nor
** slots read (table.h: bits 35-63), link it to the next atom of its list;
** by size class, the lists of recycled blocks (carved blocks of atoms its
** sweep freed, linked through their first word, for the thread's next new
** atoms); then the dead atoms its last sweep unlinked that wait for a
** grace period (atab__pend). */
#define ATAB__QUEUE_LISTS 64   /* table.h's ATAB__SHARDS (sweep.c checks) */
#define ATAB__QUEUE_LINK 0xffffu   /* an index + 1: t->queue_cap is at most 2,048 (life.c) */
#define ATAB__QUEUE_HEADS_BYTES (ATAB__QUEUE_LISTS * sizeof(uint16_t))
#define ATAB__QUEUE_BYTES(t) \
    ((size_t)(t)->queue_cap * (sizeof(const atab_atom *) + sizeof(uint64_t)) + \
     ATAB__RECYCLE_CLASSES * sizeof(atab_atom *) + ATAB__QUEUE_HEADS_BYTES + \
     sizeof(atab__pend) + (size_t)(t)->pend_cap * sizeof(atab_atom *))

/* The carved atoms a queue sweep unlinked and left for a later grace
** period to serve (sweep.c: a sweep that finds its last batch served by a
** grace period some thread ran since frees it with no grace period of its
** own). Their blocks are still atoms (killed: count REF_DEAD), which a
** reader that found one before the unlink may be reading. */
typedef struct atab__pend {
    uint64_t snap;         /* atab__gp_snap after they were unlinked */
    size_t n;              /* atoms waiting */
    atab_atom *atoms[];    /* room for t->pend_cap */
} atab__pend;

/* The list of an atom of hash h: its shard (table.h: atab__h_shard). */
static inline unsigned atab__queue_list(uint64_t h)
{
    return (unsigned)(h >> 58);
}

/* A queue's allocation, and the queue in an allocation. */
static inline void *atab__queue_block(const atab_atom **q)
{
    return (char *)(void *)q - ATAB__QUEUE_HEADS_BYTES;
}

static inline const atab_atom **atab__queue_in(void *block)
{
    return (const atab_atom **)(void *)((char *)block + ATAB__QUEUE_HEADS_BYTES);
}

/* The heads of the lists by shard of queue q. */
static inline uint16_t *atab__queue_heads(const atab_atom **q)
{
    return (uint16_t *)atab__queue_block(q);
}

/* The hashes (and links) of the atoms in queue q of room for cap atoms. */
static inline uint64_t *atab__queue_hashes(const atab_atom **q, uint32_t cap)
{
    return (uint64_t *)(void *)(q + cap);
}

/* The recycled blocks' lists in queue q of room for cap atoms. */
static inline atab_atom **atab__queue_kept(const atab_atom **q, uint32_t cap)
{
    return (atab_atom **)(void *)((char *)(q + cap) + (size_t)cap * sizeof(uint64_t));
}

/* The dead atoms that wait in queue q of room for cap atoms. */
static inline atab__pend *atab__queue_pend(const atab_atom **q, uint32_t cap)
{
    return (atab__pend *)(void *)(atab__queue_kept(q, cap) + ATAB__RECYCLE_CLASSES);
}

/* Writes atom a of hash h into slot n of queue q of room for cap atoms,
** and puts it on its shard's list; the caller then counts it (r->nq). */
static inline void atab__queue_slot(const atab_atom **q, uint32_t cap, uint32_t n,
                                    const atab_atom *a, uint64_t h)
{
    uint16_t *head = &atab__queue_heads(q)[atab__queue_list(h)];
    q[n] = a;
    atab__queue_hashes(q, cap)[n] = (h & ~(uint64_t)ATAB__QUEUE_LINK) | *head;
    *head = (uint16_t)(n + 1);
}

/* Puts atom a of hash h, brought to 0 and marked QUEUED by this thread, on
** r's queue (there, with room: fewer than cap atoms on it); a full queue
** asks for its sweep (sweep_due). The slot before the count: a child
** forked in between (thread.c: fork_child) sees the count without it,
** never an unwritten slot. Its owner's, in a section, or a flusher's. */
static inline void atab__queue_push(atab__rec *r, uint32_t cap, const atab_atom *a, uint64_t h)
{
    uint32_t n = r->nq;
    atab__queue_slot(r->queue, cap, n, a, h);
    ATAB__PAUSE("queue:slot", a);
    __atomic_store_n(&r->nq, n + 1, __ATOMIC_RELEASE);
    if (n + 1 == cap)
        __atomic_store_n(&r->sweep_due, 1, __ATOMIC_RELAXED);
}

/* A transient atom's release, inside a section on r while
** atab__cache_ours(r) (its queue is the owner's): where the count is
** exactly the caller's reference (no cache has ever kept spares of the
** atom: atom.h, SPARED, so none holds any now) and r has a queue with
** room, the count dropped to 0 and the atom queued. Non-zero when it did;
** else nothing changed. No cache entry is read: atab__unref_slow's case
** c == own + 1 with own = 0. */
static inline int atab__unref_sole(atab__rec *r, const atab_atom *a, uint64_t h)
{
    uint32_t cap = r->qcap;   /* 0 without a queue */
    if (r->nq >= cap || !atab__count_drop_sole(a))
        return 0;   /* no room, or not the sole reference */
    atab__queue_push(r, cap, a, h);
    return 1;
}

/* Takes r's queue away for a sweep: its block, with its atoms (*n), or
** NULL (none, a flusher holds r, or a fork is under way: sweep_due stays
** set). While it is away, one atom more can be queued (r->pending), and
** r->away is set until atab__queue_put. Its owner's, outside sections. */
ATAB__HIDDEN const atab_atom **atab__queue_take(atab__rec *r, uint32_t *n);
/* Gives r the queue block q (empty; a new one, or one back from a sweep),
** or NULL: makes one (none while a fork is under way: sweep_due stays set);
** r's queue is no longer away. Its owner's, outside
** sections. */
ATAB__HIDDEN void atab__queue_put(atab_table *t, atab__rec *r, const atab_atom **q);

/* A block for a new atom of len bytes from r's queue (the block of an atom
** of its size class that its sweep freed), or NULL. Its owner's, inside a
** section on r. */
static inline atab_atom *atab__recycled_take_in(atab__rec *r, uint32_t cap, size_t len)
{
    atab_atom *a = NULL, **kept;
    if (!atab__carved(len))
        return NULL;
    size_t c = atab__class_of(len);
    if (atab__cache_ours(r) && r->queue &&
        (a = (kept = atab__queue_kept(r->queue, cap))[c]) != NULL)
        kept[c] = atab__block_next(a);
    return a;
}

/* The same, for its owner outside sections: in a section of its own. */
static inline atab_atom *atab__recycled_take(atab__rec *r, uint32_t cap, size_t len)
{
    if (!atab__carved(len))
        return NULL;
    atab__enter_rec(r);
    atab_atom *a = atab__recycled_take_in(r, cap, len);
    atab__leave(r);
    return a;
}

/* Keeps the blocks of atoms[0..n) (NULL entries skipped; atoms the sweep
** of queue block q unlinked, past a grace period; the caller bumped
** t->frees), and of the atoms waiting in q (atab__pend, served) when
** `pend` (bumping t->frees for them), in q for its thread's next new
** atoms (none with a memory limit: back to their chunks), and frees those
** q kept before, which no new atom took since. The sweeping thread's,
** while it has q away. */
ATAB__HIDDEN void atab__recycle(atab_table *t, const atab_atom **q, atab_atom *const *atoms,
                                size_t n, int pend);

/* When an allocation failed: gives the blocks r keeps for new atoms back
** to their chunks, with the atoms waiting in its queue that a grace period
** has served, then frees every chunk left empty (by them, or before: a
** thread's exit, sweeps). Non-zero when it gave back a block or freed a
** chunk. Its owner's, outside sections, under the lock of the shard its
** new atom is for (table.c: new_atom): the blocks are in this call's hands
** alone on their way to their chunks, and a fork, which takes every
** shard's lock, waits for them. */
ATAB__HIDDEN int atab__recycled_free(atab_table *t, atab__rec *r);

/* Drops one reference on the count, for a thread outside any section.
** ATAB_OK, or ATAB_EREFS for a release of a reference nobody holds. */
ATAB__HIDDEN int atab__unref_direct(atab_table *t, const atab_atom *a);
/* As atab__unref_direct, in this thread's open section on r: an atom
** brought to 0 goes on r's queue (its hash made then, and only then), else
** is counted unused. Spares this thread's cache keeps of it stay, and go
** back to the count with their entry. */
ATAB__HIDDEN int atab__unref_counted(atab_table *t, atab__rec *r, const atab_atom *a);

/* The misuse count: the table's and its records' (atab_stats.misuse). */
ATAB__HIDDEN size_t atab__misuse(atab_table *t);

/* Grace periods (grace.c). Is membarrier registered for this process
** (asked once)? */
ATAB__HIDDEN int atab__have_membarrier(void);
/* The writer's half of the handshake with readers' sections (grace.c):
** nonzero when every thread of the process has passed a full barrier since
** (membarrier, or the fallback fence), 0 when it was a fence of the
** caller's alone (readers that fence for themselves need no more). */
ATAB__HIDDEN int atab__writer_fence(atab_table *t);
/* The writer's fence for threads that entered a section or a solo insert
** with no fence of their own, when membarrier cannot serve (grace.c): the
** kernel's global barrier, else a wait of a scheduler tick or more, whose
** interrupts empty every CPU's store buffer. 1 for the barrier, 2 for the
** wait, 0 in builds where every side fences for itself. */
ATAB__HIDDEN int atab__fence_fallback(atab_table *t);
/* Waits until r is seen outside a section, or has left the one it was in. */
ATAB__HIDDEN void atab__wait_out(atab__rec *r);
/* A spinning waiter's turn: a pause for each of its first 63 turns, then a
** yield for each. */
ATAB__HIDDEN void atab__relax(unsigned *spins);
/* Waits until every record inside a section now has left it: at once
** when the caller is alone on t (atab__alone). */
ATAB__HIDDEN void atab__synchronize(atab_table *t);
/* Non-zero when no thread but the caller has a record on t (the caller's
** own, if any, is the one it used last): then no other thread is inside a
** read-side section of t, and one that makes a record later (under
** t->reg_lock) reads t after whatever the caller unlinked before this
** call, so what the caller unlinked may be freed at once. The caller is
** outside any section of t. */
ATAB__HIDDEN int atab__alone(atab_table *t);

/* Records and their caches (thread.c). Gives every record's spares back to the counts, so each count is exact
** (until the next hit); with `sweep` (a full sweep's), also empties and
** frees every queue (its atoms at 0 left for the sweep) with the blocks it
** keeps for new atoms, and keeps every record off its cache, a record made
** meanwhile too, so that no spare is made until atab__flush_end: each
** count then stays what its holders hold while the sweep kills at 0; with
** `recycled`, calls it for each such block (recycled(ud, block, bytes):
** for the reporter) while its record is held. Waits only for sections in
** progress. */
ATAB__HIDDEN void atab__flush_counts(atab_table *t, int sweep,
                                     void (*recycled)(void *, const void *, size_t),
                                     void *ud);
/* Gives the records their caches back after a full sweep's flush. */
ATAB__HIDDEN void atab__flush_end(atab_table *t);
/* Registers the table (its id) and initialises its records' state. */
ATAB__HIDDEN void atab__threads_init(atab_table *t);
/* Unregisters the table and frees its records; no thread may use it. */
ATAB__HIDDEN void atab__threads_fini(atab_table *t);

/* fn(ud, block, bytes) for every record's block (for the reporter). */
ATAB__HIDDEN void atab__threads_visit_memory(atab_table *t,
                                             void (*fn)(void *, const void *, size_t),
                                             void *ud);

#endif /* ATAB_THREAD_H */
