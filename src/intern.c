/* SPDX-License-Identifier: MIT */
/*
** intern.c - the hot path: interning and looking up a string, from the
** hash to the atom, lock-free. Contract:
**   - a hit (the key's atom is in the table) takes no lock and writes
**     nothing shared: it hashes the key, and a static atom in this
**     thread's cache entry of a short key's hash (below) is the answer,
**     with no section and nothing written (static_hit); else it enters a
**     read-side section on this thread's record (thread.h), and takes the
**     atom and a spare reference from the entry, which keeps its atom
**     alive (an entry whose tag disagrees with the key's hash is passed by
**     without a read of its atom); else it probes the key's two groups
**     (probe.h) and takes a reference from the cache or the atom's count;
**   - a short key's hit makes only the keys' product (hash.h), whose bits
**     name its cache set and tag; the hash's last multiply is made on the
**     ways past the cache (they take the product);
**   - a short key (1 to ATAB__SHORT_KEY bytes, most of them) goes a path of
**     its own, one copy for each class of lengths (1-8, 9-16, 17-32) so
**     that neither its hash nor its compare branches on the length, whose
**     ways out are all tail calls, so the hit saves no registers; a key of
**     1 to 8 bytes is one word, read by one load that ends at its end and
**     may start before it on its page (key_word), compared with the
**     atom's word, which one load reads too;
**   - a miss leaves the section and finishes under the shard's lock: the
**     insert of a UTF-8 key of up to 32 bytes (by the short-key path or
**     find_or_insert) makes its atom first; its probe read the shard's
**     hold count before the array (table.h), and where the lock finds it
**     unchanged the lock is held for the slot's stores alone, into the
**     room the probe saw (insert_short), else for the probe again too
**     (atab__insert_made_locked, table.c); the table's solo thread makes
**     those stores with no lock at all (table.h: "the solo thread");
**     anything else takes the locked way (atab__find_or_insert_locked);
**   - a release of the atom its thread's insert made last takes its hash
**     from the insert (thread.h: made);
**   - every returned dynamic atom carries one reference for the caller;
**     NULL comes with atab_last_error() (ATAB_OK for a lookup that found
**     nothing);
**   - a release hashes the atom to find its cache entry and keeps the
**     reference there as a spare while others hold the atom, else drops it
**     from the count (a transient atom's, the caller's reference alone,
**     inline: to 0 and onto this thread's queue); the sweeps it may start
**     (its full queue, or the table's threshold) run after its section
**     (sweep.c).
** Sections, spares and the cache: thread.h; counts: atom.h; slot arrays:
** table.h.
*/
#include "atab_int.h"
#include "probe.h"

/* The hit path's functions start on a line of their own, so that where
** the linker places them does not move their first instructions across a
** fetch block from one build to the next. */
#define HOT_ALIGN __attribute__((aligned(64)))

/* atab__match_short for keys of 1 to 16 bytes (9 to 16 on the hit path), which
** a word from each end compares: their probe is a copy of its own. */
ATAB__INLINE int match_short16(const void *key, const atab_atom *a)
{
    const atab__short_key *k = key;
    if (k->len - 1 >= 16)
        __builtin_unreachable();
    return atab_len(a) == k->len && atab__eq_bytes(atab_chars(a), k->s, k->len);
}

/* The array of hash h's shard, for a lock-free reader. */
static inline atab__arr shard_arr(const atab_table *t, uint64_t h)
{
    return atab__arr_of(__atomic_load_n(&t->arrs[atab__h_shard(h)], __ATOMIC_ACQUIRE));
}

/* The hold count of hash h's shard, for an intern's lock-free probe: read
** before the shard's array (shard_arr), so that an insert that finds it
** unchanged under the lock may trust what that probe saw (table.h). */
static inline uint64_t shard_holds(atab_table *t, uint64_t h)
{
    return __atomic_load_n(&atab__shard_of(t, h)->holds, __ATOMIC_ACQUIRE);
}

/* Where a key has room (atab__room), given the free slots fa of its group
** A, whose control bytes start at ctrl_a, and fb of its group B at ctrl_b
** (fb 0 where B was not read): A's first free slot, else B's; 0 for none. */
static inline uintptr_t room_in(const uint8_t *ctrl_a, uint32_t fa, const uint8_t *ctrl_b,
                                uint32_t fb)
{
    return fa ? atab__room(ctrl_a, fa) : fb ? atab__room(ctrl_b, fb) : 0;
}

/* The three lines that an insert's hold of the shard's lock writes (the
** shard's, the room's control byte and its slot), which other threads'
** inserts and sweeps write too, asked for before the atom is made
** (atab__prefetch_w), so that their transfers overlap each other and the
** atom's making instead of following the lock's. */
ATAB__INLINE void insert_prefetch(atab_table *t, uint64_t h, uintptr_t room)
{
    const uint8_t *ctrl = (const uint8_t *)(room & ~(uintptr_t)15);
    int ok = (int)t->prefetchw;
    atab__prefetch_w(ok, atab__shard_of(t, h));
    atab__prefetch_w(ok, ctrl + (room & 15));
    atab__prefetch_w(ok, ctrl + ATAB__GROUP + 8 * (room & 15));
}

/* Puts atom na of hash h into the room `room` of shard sh (atab__room),
** and counts it; the shard's lock held, or its solo thread's solo_busy
** raised (table.h). */
ATAB__INLINE void put_room(atab__shard *sh, uintptr_t room, atab_atom *na, uint64_t h)
{
    atab__put_at((uint8_t *)(room & ~(uintptr_t)15), room & 15, atab__slot_make(na, h), h);
    sh->used++;
}

/* The end of a short key's insert (insert_short), outside any section,
** with na, the block for its atom (from r's recycled blocks, or carved
** from r's bump). The atom is made before the lock. Under the lock, a hold
** count unchanged since the probe means nothing was filled and no array
** replaced since: the atom goes into the room seen, with no probe again,
** and the lock is dropped. Else the probe is made again under the lock
** (atab__insert_made_locked). The table's solo thread makes the same
** check and stores with no lock, its record's solo_busy raised, if the
** lock is free (table.h).
** A shard with no array has a limit of 0, so the room its probe saw, in
** atab__no_slots, is never written. */
ATAB__INLINE const atab_atom *insert_block(atab__rec *r, const char *s, size_t len, uint64_t h,
                                           uint64_t holds, uintptr_t room, atab_atom *na)
{
    atab_table *t = r->t;
    atab__atom_init_short(na, s, len);
    ATAB__PAUSE("insert:made", t);
    atab__shard *sh = atab__shard_of(t, h);
    if (__atomic_load_n(&t->solo_rec, __ATOMIC_RELAXED) == r) {   /* table.h: solo */
        __atomic_store_n(&r->solo_busy, 1, __ATOMIC_RELAXED);
        atab__solo_fence();
        if (ATAB__LIKELY(__atomic_load_n(&t->solo_rec, __ATOMIC_RELAXED) == r &&
                         !__atomic_load_n(&sh->lock.word, __ATOMIC_ACQUIRE) &&
                         sh->holds == holds && sh->used < sh->limit)) {
            ATAB__PAUSE("insert:solo", t);
            put_room(sh, room, na, h);
            __atomic_store_n(&sh->holds, holds + 1, __ATOMIC_RELEASE);
            __atomic_store_n(&r->solo_busy, 0, __ATOMIC_RELEASE);
            return atab__made_by(r, na, h);
        }
        __atomic_store_n(&r->solo_busy, 0, __ATOMIC_RELEASE);
    }
    atab__shard_take(t, sh);
    if (ATAB__LIKELY(sh->holds == holds && sh->used < sh->limit)) {   /* as the probe saw it */
        put_room(sh, room, na, h);
        atab__shard_drop(sh);
        return atab__made_by(r, na, h);
    }
    return atab__insert_made_locked(r, sh, s, len, h, na);
}

/* insert_made's block when r's bump has no room: a block freed back to a
** chunk, with up to ATAB__CHUNK_TAKE_MORE more of its size class moved
** onto the blocks r's queue keeps for the next new atoms
** (atab__chunk_carve_many), else a new chunk's, else the locked way. An
** intern that the locked way serves is a success: the error the refused
** chunk set is taken back. */
static __attribute__((noinline)) const atab_atom *
insert_carve_slow(atab__rec *r, const char *s, size_t len, uint64_t h, uint64_t holds,
                  uintptr_t room)
{
    atab_table *t = r->t;
    atab_status saved = atab_last_error();
    atab_atom *na = atab__chunk_carve_many(t, r, atab__block_bytes(len));
    if (na)
        return insert_block(r, s, len, h, holds, room, na);
    const atab_atom *a = atab__insert_short_locked(t, s, len, h, NULL);
    if (a)
        atab__set_error(saved);
    return a;
}

/* insert_block with na, or when NULL a block carved from r's bump (no
** lock), else insert_carve_slow. */
ATAB__INLINE const atab_atom *insert_made(atab__rec *r, const char *s, size_t len, uint64_t h,
                                          uint64_t holds, uintptr_t room, atab_atom *na)
{
    if (!na) {
        size_t bytes = atab__block_bytes(len);
        if (ATAB__UNLIKELY(!atab__bump_fits(&r->bump, bytes)))
            return insert_carve_slow(r, s, len, h, holds, room);
        na = atab__bump_take(&r->bump, bytes);
    }
    return insert_block(r, s, len, h, holds, room, na);
}

/* Must the insert of short key s, whose probe saw room at `room` (0 for
** none), go the locked way: no room, or a static atom's key (the sets'
** filters, then their index)? Else the lines its lock's hold writes are
** asked for (insert_prefetch). */
ATAB__INLINE int insert_locked_first(atab_table *t, const char *s, size_t len, uint64_t h,
                                     uintptr_t room)
{
    if (!room)
        return 1;
    insert_prefetch(t, h, room);
    return atab__static_lookup(t, s, len) != NULL;
}

/* The insert of short UTF-8 key s (len bytes, hash h) by this thread's
** record r on the table, whose lock-free probe missed, having read the
** shard's hold count `holds` and seen room at `room` (table.h). Called
** outside any section: insert_locked_first, then insert_made with a block
** from r's recycled ones. The short-key probe (short_probe_in) does the
** same, with the block taken in its section. */
ATAB__INLINE const atab_atom *insert_short(atab__rec *r, const char *s, size_t len, uint64_t h,
                                           uint64_t holds, uintptr_t room)
{
    if (!s || len - 1 >= ATAB__SHORT_KEY)
        __builtin_unreachable();
    atab_table *t = r->t;
    if (insert_locked_first(t, s, len, h, room))
        return atab__insert_short_locked(t, s, len, h, NULL);
    return insert_made(r, s, len, h, holds, room, atab__recycled_take(r, t->queue_cap, len));
}

/* insert_short, out of line, for find_or_insert. */
static __attribute__((noinline)) const atab_atom *
insert_short_out(atab__rec *r, const char *s, size_t len, uint64_t h, uint64_t holds,
                 uintptr_t room)
{
    return insert_short(r, s, len, h, holds, room);
}

/* Where a key of hash h that a probe of v missed has room (atab__room):
** group A's first free slot, else B's when A is full. Read after the
** probe, in its section: a slot free now was free when the shard's hold
** count was read before it, unless that count has moved since. */
static inline uintptr_t room_of(atab__arr v, uint64_t h)
{
    size_t ga = atab__h_group(h, v.ngroups), gb = atab__h_group2(h, v.ngroups);
    uint32_t fa = atab__group_read(v, ga, 0).free;
    uint32_t fb = fa ? 0 : atab__group_read(v, gb, 0).free;
    return room_in(atab__group_ctrl(v, ga), fa, atab__group_ctrl(v, gb), fb);
}

/* After a lock-free probe missed (or met a killed atom): a lookup is done
** unless a static atom not yet cached could match (the sets are immutable:
** asking them takes no lock); an intern takes the lock. */
static __attribute__((noinline)) const atab_atom *
after_miss(atab_table *t, const atab__key *k, const char *u8, int insert_new)
{
    if (!insert_new && !atab__static_lookup(t, u8, k->len))
        return atab__fail(ATAB_OK);   /* absent is no error: clear a stale one */
    return atab__find_or_insert_locked(t, k, u8, insert_new);
}

/* Looks up, and with insert_new interns, a hashed key: a lock-free probe
** in a section and a reference from this thread's cache, else the lock. */
static const atab_atom *find_or_insert(atab_table *t, const atab__key *k, const char *u8,
                                       int insert_new)
{
    atab__rec *r = atab__rec_of(t);
    if (ATAB__UNLIKELY(!r))
        return atab__find_or_insert_locked(t, k, u8, insert_new);
    atab__enter_rec(r);
    if (ATAB__LIKELY(atab__cache_ours(r))) {
        uint64_t *e = atab__cache_slot(r, k->hash), x = *e;
        const atab_atom *a = atab__ent_atom(x);
        if (atab__tag_agrees(x, k->hash) && atab__ent_live(x) && atab__match_key(k, a)) {
            ATAB__PAUSE("cache:entry", t);
            if (atab__ent_usable(a, x) || atab__ent_stale(r, e) == 0) {
                atab__ent_take(e, x);
                atab__leave(r);
                return a;
            }
        } else if ((a = atab__cache_way1(r, e, k->hash, atab__match_key, k)) != NULL) {
            atab__leave(r);
            return a;
        }
    }
    uint64_t holds = shard_holds(t, k->hash);
    atab__arr v = shard_arr(t, k->hash);
    ATAB__PAUSE("probe:array", t);
    const atab_atom *a = atab__probe(v, k->hash, atab__match_key, k, NULL);
    uintptr_t room = 0;
    if (a && atab__ref(t, r, a, k->hash) != 0)
        a = NULL;   /* killed by a sweep: absent (and no room trusted) */
    else if (!a && !v.overflow)
        room = room_of(v, k->hash);
    atab__leave(r);
    if (a)
        return a;
    if (insert_new && k->s && k->len - 1 < ATAB__SHORT_KEY)
        return insert_short_out(r, k->s, k->len, k->hash, holds, room);
    return after_miss(t, k, u8, insert_new);
}

/* The atom of this thread's cache entry e when it is a static atom that
** `match` finds equal to `key`, else NULL: such a hit takes no section and
** writes nothing (thread.h: atab__ent_peek). */
ATAB__INLINE const atab_atom *static_hit(const uint64_t *e, atab__match_fn match,
                                         const void *key)
{
    uint64_t x = atab__ent_peek(e);
    return (x & ATAB__ENT_STATIC) && match(key, atab__ent_atom(x)) ? atab__ent_atom(x) : NULL;
}

/* The short-key path's ways out, out of line so the hit path below saves
** no registers for them. */
static __attribute__((noinline)) const atab_atom *
short_general(atab_table *t, const char *s, size_t len, uint64_t p, int insert_new)
{
    uint64_t h = atab__hash_len(&t->hkeys, p, len);
    atab__key k = {s, NULL, 0, len, h};
    atab__rec *r = atab__rec_of(t);
    const atab_atom *a = r ? static_hit(atab__cache_slot(r, h), atab__match_key, &k) : NULL;
    return a ? a : find_or_insert(t, &k, s, insert_new);
}

static __attribute__((noinline)) const atab_atom *
short_missed(atab_table *t, const char *s, size_t len, uint64_t h, int insert_new)
{
    if (!insert_new && len > t->static_maxlen)
        return atab__fail(ATAB_OK);   /* a lookup no static atom can answer */
    atab__key k = {s, NULL, 0, len, h};
    return insert_new ? atab__find_or_insert_locked(t, &k, s, 1) : after_miss(t, &k, s, 0);
}

/* A found atom's end of the short-key path: its reference, then leave.
** The hit path saw no spare of the key's atom in way 0 (the probe follows
** a cache entry that did not answer), so the reference is atab__ref's slow
** path at once: its inline test of way 0 would fail. */
ATAB__INLINE const atab_atom *short_found(atab_table *t, atab__rec *r, const atab_atom *a,
                                          const char *s, size_t len, uint64_t h,
                                          int insert_new)
{
    if (ATAB__UNLIKELY(atab__ref_slow(t, r, a, h) != 0)) {
        atab__leave(r);   /* killed by a sweep: absent */
        return short_missed(t, s, len, h, insert_new);
    }
    atab__leave(r);
    return a;
}

/* The short-key path past both groups, in an array whose keys overflowed
** (rare), in this thread's open section: a whole probe of the shard's
** array, read again. (Not a walk from group B alone: a newer array placed
** its keys anew, perhaps this key in its group A there.) */
static __attribute__((noinline)) const atab_atom *
short_past_b(atab_table *t, const char *s, size_t len, uint64_t h, int insert_new)
{
    atab__short_key k = {s, len};
    const atab_atom *a = atab__probe(shard_arr(t, h), h, atab__match_short, &k, NULL);
    if (a)
        return short_found(t, atab__tls_last.rec, a, s, len, h, insert_new);
    atab__leave(atab__tls_last.rec);
    return short_missed(t, s, len, h, insert_new);
}

/* A key of 1 to 8 bytes by its word (hash.h: atab__word_end). */
typedef struct word_key {
    uint64_t w;
    size_t len;
} word_key;

ATAB__INLINE int match_word(const void *key, const atab_atom *a)
{
    const word_key *k = key;
    if (k->len - 1 >= 8)
        __builtin_unreachable();
    return atab_len(a) == k->len && atab__word_end(atab_chars(a), k->len) == k->w;
}

/* The probe of the short-key path, in this thread's open section on its
** last record r, after its cache missed, with `match` and `key` for the
** key's class. The table is r's (the hit path saw their ids match), so the
** hit path need not keep t for this call and its compare runs in the
** caller-saved registers. One copy for keys of 1 to 8 bytes (by their
** word), one for up to 16, one for longer. */
ATAB__INLINE const atab_atom *short_probe_in(atab__rec *r, const char *s, size_t len,
                                             uint64_t h, int insert_new, atab__match_fn match,
                                             const void *key)
{
    atab_table *t = r->t;
    uint64_t holds = insert_new ? shard_holds(t, h) : 0;
    atab__arr v = shard_arr(t, h);
    size_t ga = atab__h_group(h, v.ngroups);
    const uint8_t *ctrl = atab__group_ctrl(v, ga);
    __builtin_prefetch(ctrl + 64);
    __builtin_prefetch(ctrl + 128);
    unsigned c = atab__h_ctrl(h);
    atab__group gra = atab__group_read(v, ga, c);
    ATAB__PAUSE("probe:group_a", ctrl);
    const atab_atom *a = atab__group_find(v, ga, gra.match, h, match, key, NULL);
    if (a)
        return short_found(t, r, a, s, len, h, insert_new);
    if (!insert_new && gra.match && gra.empty)   /* as atab__probe_ab_at: A may have */
        gra = atab__group_read(v, ga, c);   /* filled and kicked (an intern's lock sees it) */
    const uint8_t *ctrl_b = NULL;
    uint32_t fb = 0;
    if (!gra.empty) {   /* as atab__probe_ab_at: B only past a full A */
        size_t gb = atab__h_group2(h, v.ngroups);
        atab__group grb = atab__group_read(v, gb, c);
        if ((a = atab__group_find(v, gb, grb.match, h, match, key, NULL)) != NULL)
            return short_found(t, r, a, s, len, h, insert_new);
        ctrl_b = atab__group_ctrl(v, gb), fb = grb.free;
    }
    if (ATAB__UNLIKELY(v.overflow))
        return short_past_b(t, s, len, h, insert_new);
    if (!insert_new) {
        atab__leave(r);
        return short_missed(t, s, len, h, 0);
    }
    /* insert_short, with its block popped from r's queue in this section, not
    ** in a section of its own (atab__recycled_take) */
    if (!s || len - 1 >= ATAB__SHORT_KEY)
        __builtin_unreachable();
    uintptr_t room = room_in(ctrl, gra.free, ctrl_b, fb);
    if (insert_locked_first(t, s, len, h, room)) {
        atab__leave(r);
        return atab__insert_short_locked(t, s, len, h, NULL);
    }
    atab_atom *na = atab__recycled_take_in(r, t->queue_cap, len);
    atab__leave(r);
    return insert_made(r, s, len, h, holds, room, na);
}

/* The probe's copies: one for each class of keys, each of intern and
** lookup (a lookup reads no hold count and seeks no room). They and the
** other ways out of the hit path take the keys' product p (hash.h), the
** hit path's, and make the hash from it. */
#define SHORT_PROBE(name, insert_new, match, ...)                                        \
    static __attribute__((noinline)) const atab_atom *                                   \
    name(atab__rec *r, const char *s, size_t len, uint64_t p, uint64_t w)                \
    {                                                                                    \
        uint64_t h = atab__hash_len(&r->t->hkeys, p, len);                               \
        (void)w;                                                                         \
        __VA_ARGS__;                                                                     \
        return short_probe_in(r, s, len, h, insert_new, match, &k);                      \
    }
SHORT_PROBE(intern_probe8, 1, match_word, word_key k = {w, len})
SHORT_PROBE(lookup_probe8, 0, match_word, word_key k = {w, len})
SHORT_PROBE(intern_probe16, 1, match_short16, atab__short_key k = {s, len})
SHORT_PROBE(lookup_probe16, 0, match_short16, atab__short_key k = {s, len})
SHORT_PROBE(intern_probe32, 1, atab__match_short, atab__short_key k = {s, len})
SHORT_PROBE(lookup_probe32, 0, atab__match_short, atab__short_key k = {s, len})

static inline const atab_atom *short_probe8(atab__rec *r, const char *s, size_t len,
                                            uint64_t p, int insert_new, uint64_t w)
{
    return insert_new ? intern_probe8(r, s, len, p, w) : lookup_probe8(r, s, len, p, w);
}

static inline const atab_atom *short_probe16(atab__rec *r, const char *s, size_t len,
                                             uint64_t p, int insert_new)
{
    return insert_new ? intern_probe16(r, s, len, p, 0) : lookup_probe16(r, s, len, p, 0);
}

static inline const atab_atom *short_probe32(atab__rec *r, const char *s, size_t len,
                                             uint64_t p, int insert_new)
{
    return insert_new ? intern_probe32(r, s, len, p, 0) : lookup_probe32(r, s, len, p, 0);
}

static inline const atab_atom *short_probe(atab__rec *r, const char *s, size_t len,
                                           uint64_t p, int insert_new)
{
    return len > 16 ? short_probe32(r, s, len, p, insert_new)
                    : short_probe16(r, s, len, p, insert_new);
}

/* The short-key path's cache hit whose atom's count bits are 0 (thread.h:
** over-releases), in this thread's open section: the spare when the count
** is saturated, else the probe. Out of line, so the hit path saves no
** registers for it. */
static __attribute__((noinline)) const atab_atom *
short_stale(atab__rec *r, const char *s, size_t len, uint64_t p, int insert_new)
{
    uint64_t *e = atab__cache_slot(r, p), x = *e;
    if (atab__ent_stale(r, e) == 0) {
        atab__ent_take_dyn(e, x);
        atab__leave(r);
        return atab__ent_atom(x);
    }
    return short_probe(r, s, len, p, insert_new);
}

/* The short-key path's cache hit in way 1 (thread.h), live and its tag
** agreeing with p's, in this thread's open section: its atom when it is the
** key's, else the probe. Out of line, as short_stale. */
static __attribute__((noinline)) const atab_atom *
short_way1(atab__rec *r, const char *s, size_t len, uint64_t p, int insert_new)
{
    atab__short_key k = {s, len};
    const atab_atom *a = atab__cache_way1(r, atab__cache_slot(r, p), p, atab__match_short, &k);
    if (a) {
        atab__leave(r);
        return a;
    }
    return short_probe(r, s, len, p, insert_new);
}

/* The hit path for keys of lo to hi bytes (most atoms): the hash, this
** thread's cache, and the key compared with the atom found there;
** everything else is a tail call, so this saves no registers. */
ATAB__INLINE const atab_atom *intern_short_in(atab_table *t, const char *s, size_t len,
                                              int insert_new, size_t lo, size_t hi)
{
    if (len < lo || len > hi)
        __builtin_unreachable();   /* the hash and the compare branch on no length */
    uint64_t p = atab__hash_pre(&t->hkeys, s, len);   /* the hash's cache bits */
    if (ATAB__UNLIKELY(atab__tls_last.id != __atomic_load_n(&t->fast_id, __ATOMIC_RELAXED)))
        return short_general(t, s, len, p, insert_new);   /* first visit, another table,
                                                             or readers must fence */
    atab__rec *r = atab__tls_last.rec;
    atab__short_key k = {s, len};
    uint64_t *e = atab__cache_slot(r, p), x;
    const atab_atom *a = static_hit(e, atab__match_short, &k);
    if (ATAB__LIKELY(a != NULL))
        return a;
    atab__enter_rec_nofence(r);
    if (ATAB__LIKELY(atab__cache_ours(r))) {
        a = atab__ent_atom(x = *e);
        if (ATAB__LIKELY(atab__tag_agrees(x, p) && atab__ent_live_at(e, x) &&
                         atab__match_short(&k, a))) {
            if (ATAB__UNLIKELY(!atab__counted(a)))   /* a static atom returned above */
                return short_stale(r, s, len, p, insert_new);
            atab__ent_take_dyn(e, x);
            atab__leave(r);
            return a;
        }
        if (atab__way1_may(e, p))
            return short_way1(r, s, len, p, insert_new);
    }
    return short_probe(r, s, len, p, insert_new);
}

static const atab_atom *intern_bytes(atab_table *t, const char *s, size_t len, int insert_new);

/* The word of a key of 1 to 8 bytes (hash.h) into *w: read in place by
** the one load that ends at the key's end when the table allows it and s
** is 8 or more bytes into its page, so the load stays on the key's page
** (the bytes before the key are read and shifted off); else from the
** key's own bytes. A NULL s, never 8 bytes into a page, returns -1 there:
** atab_intern leaves that test to this path's rare branch. */
ATAB__INLINE int key_word(const atab_table *t, const char *s, size_t len, uint64_t *w)
{
#if ATAB__X86_64_ASM   /* (implies ATAB__READ_BEFORE) */
    int on_page;
    __asm__("testq %1, %2" : "=@ccnz"(on_page) : "r"(s), "m"(t->key_page_mask));
    if (ATAB__LIKELY(on_page)) {
        *w = atab__word_end(s, len);   /* its asm reads the bytes before the key, not C */
        return 0;
    }
#elif ATAB__READ_BEFORE
    if (ATAB__LIKELY(((uintptr_t)s & t->key_page_mask) != 0)) {
        const char *p = s;
        __asm__("" : "+r"(p));   /* the bytes before the key: the machine's, not C's */
        *w = atab__word_end(p, len);
        return 0;
    }
#else
    (void)t;
#endif
    if (ATAB__UNLIKELY(!s)) {
        *w = 0;   /* unread: GCC at -Og cannot see that (-Wmaybe-uninitialized) */
        return -1;
    }
    *w = atab__word_safe(s, len);
    return 0;
}

/* The hit path of a key of 1 to 8 bytes (most atoms): its word, hashed
** and compared with the cached atom's, which one load reads (the atom's
** header before its characters makes the load's first bytes its own). */
ATAB__INLINE const atab_atom *short8_in(atab_table *t, const char *s, size_t len, int insert_new)
{
    if (len < 1 || len > 8)
        __builtin_unreachable();
    uint64_t w;
    if (ATAB__UNLIKELY(key_word(t, s, len, &w) != 0))
        return intern_bytes(t, s, len, insert_new);   /* s is NULL: its error */
    uint64_t p = atab__hash_pre_word(&t->hkeys, w, len);   /* the hash's cache bits */
    if (ATAB__UNLIKELY(atab__tls_last.id != __atomic_load_n(&t->fast_id, __ATOMIC_RELAXED)))
        return short_general(t, s, len, p, insert_new);
    atab__rec *r = atab__tls_last.rec;
    word_key k = {w, len};
    uint64_t *e = atab__cache_slot(r, p), x;
    const atab_atom *a = static_hit(e, match_word, &k);
    if (ATAB__LIKELY(a != NULL))
        return a;
    atab__enter_rec_nofence(r);
    if (ATAB__LIKELY(atab__cache_ours(r))) {
        a = atab__ent_atom(x = *e);
        if (ATAB__LIKELY(atab__tag_agrees(x, p) && atab__ent_live_at(e, x) &&
                         match_word(&k, a))) {
            if (ATAB__UNLIKELY(!atab__counted(a)))   /* a static atom returned above */
                return short_stale(r, s, len, p, insert_new);
            atab__ent_take_dyn(e, x);
            atab__leave(r);
            return a;
        }
        if (atab__way1_may(e, p))
            return short_way1(r, s, len, p, insert_new);
    }
    return short_probe8(r, s, len, p, insert_new, w);
}

/* The short-key path, one copy for each class of lengths whose hash and
** compare read the key alike (1-8, 9-16 and 17-32 bytes) and each of
** intern and lookup, each out of line (inline, GCC would hoist their
** common loads and save registers for them). */
#define SHORT_CLASS(name, lo, hi, insert_new)                                              \
    static __attribute__((noinline)) HOT_ALIGN const atab_atom *name(atab_table *t,       \
                                                                     const char *s,       \
                                                                     size_t len)          \
    {                                                                                     \
        return intern_short_in(t, s, len, insert_new, lo, hi);                            \
    }
SHORT_CLASS(intern_9_16, 9, 16, 1)
SHORT_CLASS(intern_17_32, 17, ATAB__SHORT_KEY, 1)
SHORT_CLASS(lookup_9_16, 9, 16, 0)
SHORT_CLASS(lookup_17_32, 17, ATAB__SHORT_KEY, 0)

static __attribute__((noinline)) HOT_ALIGN const atab_atom *intern_1_8(atab_table *t,
                                                                       const char *s, size_t len)
{
    return short8_in(t, s, len, 1);
}

static __attribute__((noinline)) HOT_ALIGN const atab_atom *lookup_1_8(atab_table *t,
                                                                       const char *s, size_t len)
{
    return short8_in(t, s, len, 0);
}

static int check_bytes(atab_table *t, const void *s, size_t len)
{
    if (!t || (!s && len > 0)) {
        atab__set_error(ATAB_EINVAL);
        return -1;
    }
    if (len > ATAB_MAX_LEN) {
        atab__set_error(ATAB_ETOOLONG);
        return -1;
    }
    return 0;
}

static __attribute__((noinline)) const atab_atom *
intern_bytes(atab_table *t, const char *s, size_t len, int insert_new)
{
    if (check_bytes(t, s, len) != 0)
        return NULL;
    s = len ? s : "";
    atab__key k = {s, NULL, 0, len, atab__table_hash(t, s, len)};
    return find_or_insert(t, &k, s, insert_new);
}

/* The short path's classes are tail calls, chosen by the length with the
** range check folded in: a longer key pays nothing for them but two
** compares, since intern_bytes is a tail call too. */
HOT_ALIGN const atab_atom *atab_intern(atab_table *t, const char *s, size_t len)
{
    if (ATAB__UNLIKELY(!t))
        return intern_bytes(t, s, len, 1);
    if (ATAB__LIKELY(len - 1 < 8))
        return intern_1_8(t, s, len);   /* which tests s off its fast path */
    if (ATAB__UNLIKELY(!s))
        return intern_bytes(t, s, len, 1);
    if (ATAB__LIKELY(len - 1 < 16))
        return intern_9_16(t, s, len);
    return len - 1 < ATAB__SHORT_KEY ? intern_17_32(t, s, len) : intern_bytes(t, s, len, 1);
}

HOT_ALIGN const atab_atom *atab_lookup(atab_table *t, const char *s, size_t len)
{
    if (ATAB__UNLIKELY(!t))
        return intern_bytes(t, s, len, 0);
    if (ATAB__LIKELY(len - 1 < 8))
        return lookup_1_8(t, s, len);   /* which tests s off its fast path */
    if (ATAB__UNLIKELY(!s))
        return intern_bytes(t, s, len, 0);
    if (ATAB__LIKELY(len - 1 < 16))
        return lookup_9_16(t, s, len);
    return len - 1 < ATAB__SHORT_KEY ? lookup_17_32(t, s, len) : intern_bytes(t, s, len, 0);
}

const atab_atom *atab_intern_cstr(atab_table *t, const char *s)
{
    if (!s)
        return atab__fail(ATAB_EINVAL);
    return atab_intern(t, s, strlen(s));
}

/* UTF-16: short text is converted on the stack and goes the UTF-8 way;
** longer text is hashed and compared chunk by chunk, never copied. */
static const atab_atom *intern_u16(atab_table *t, const uint16_t *s, size_t n, int insert_new)
{
    char buf[ATAB__U16_STACK];
    size_t len8 = 0;
    if (check_bytes(t, s, n) != 0)
        return NULL;
    int rc = atab__utf16_measure(s, n, &len8);
    if (rc != ATAB_OK)
        return atab__fail(rc);
    if (len8 <= sizeof buf) {
        atab__utf16_encode(buf, s, n);
        return intern_bytes(t, buf, len8, insert_new);
    }
    atab__key k = {NULL, s, n, len8, 0};
    k.hash = atab__hash_key_u16(t->seed, &k);
    return find_or_insert(t, &k, NULL, insert_new);   /* statics are shorter */
}

const atab_atom *atab_intern_utf16(atab_table *t, const uint16_t *s, size_t len)
{
    return intern_u16(t, s, len, 1);
}

const atab_atom *atab_lookup_utf16(atab_table *t, const uint16_t *s, size_t len)
{
    return intern_u16(t, s, len, 0);
}

/* ---- ASCII-lowercase interning ---- */

#define LOWER_STACK 256   /* atab_intern_lower folds keys up to this on the stack */
#define LSB8 UINT64_C(0x0101010101010101)
#define MSB8 UINT64_C(0x8080808080808080)

/* Bit 7 of each byte of w that is 'A'..'Z' (SWAR: with bit 7 masked off
** no sum carries into the next byte; non-ASCII bytes are left out). */
static inline uint64_t upper_bytes(uint64_t w)
{
    uint64_t x = w & ~MSB8;
    return (x + 0x3f * LSB8) & ~(x + 0x25 * LSB8) & ~w & MSB8;
}

/* Does s hold an uppercase ASCII byte? Read in place, a word at a time. */
static int has_upper(const char *s, size_t len)
{
    uint64_t w, m = 0;
    size_t i = 0;
    for (; i + 8 <= len && !m; i += 8)
        memcpy(&w, s + i, 8), m = upper_bytes(w);
    for (; i < len && !m; i++)
        m = (unsigned)(unsigned char)s[i] - 'A' < 26u;
    return m != 0;
}

/* dst = s with 'A'..'Z' folded to 'a'..'z' (bit 5 set). */
/* (out of line: GCC cannot tell that it fills dst, and warns) */
static __attribute__((noinline)) void fold_lower(char *dst, const char *s, size_t len)
{
    uint64_t w;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        memcpy(&w, s + i, 8);
        w |= upper_bytes(w) >> 2;   /* bit 7 -> bit 5: +0x20 */
        memcpy(dst + i, &w, 8);
    }
    for (; i < len; i++)
        dst[i] = (char)((unsigned)(unsigned char)s[i] - 'A' < 26u ? s[i] | 0x20 : s[i]);
}

/* Already lowercase: interned in place (no copy). Else folded on the stack
** or, past LOWER_STACK bytes, in a block from the table's allocator (which
** may fail: ATAB_ENOMEM or ATAB_ELIMIT, the table unchanged). */
const atab_atom *atab_intern_lower(atab_table *t, const char *s, size_t len)
{
    char local[LOWER_STACK], *buf = local;
    if (check_bytes(t, s, len) != 0)
        return NULL;
    if (!has_upper(s, len))
        return atab_intern(t, s, len);
    if (len > sizeof local && !(buf = atab__alloc_or_purge(t, len)))
        return NULL;
    fold_lower(buf, s, len);
    const atab_atom *a = atab_intern(t, buf, len);
    if (buf != local)
        atab__free(t, buf, len);
    return a;
}

/* The UTF-16 twin: units 'A'..'Z' folded, the rest as they are. Text
** too long for the stack is checked before its copy is allocated (the
** fold leaves surrogates as they are), so invalid text says ATAB_EUTF16
** whatever the allocator would say. */
const atab_atom *atab_intern_lower_utf16(atab_table *t, const uint16_t *s, size_t len)
{
    uint16_t local[LOWER_STACK / 2], *buf = local;
    size_t i = 0, len8;
    if (check_bytes(t, s, len) != 0)
        return NULL;
    while (i < len && (unsigned)s[i] - 'A' >= 26u)
        i++;
    if (i == len)
        return atab_intern_utf16(t, s, len);
    if (len > LOWER_STACK / 2) {
        int rc = atab__utf16_measure(s, len, &len8);
        if (rc != ATAB_OK)
            return atab__fail(rc);
        if (!(buf = atab__alloc_or_purge(t, len * sizeof *buf)))
            return NULL;
    }
    for (i = 0; i < len; i++)
        buf[i] = (uint16_t)((unsigned)s[i] - 'A' < 26u ? s[i] | 0x20 : s[i]);
    const atab_atom *a = atab_intern_utf16(t, buf, len);
    if (buf != local)
        atab__free(t, buf, len * sizeof *buf);
    return a;
}

/* ---- release ---- */

#ifdef ATAB_DEBUG
/* Debug builds: is `a` a dynamic atom of t? Looked up by its hash and its
** address under the shard lock, before anything touches its count, so a
** pointer that is not an atom (or another table's) is refused. `a` must
** still point to readable memory with a header. */
static int owns_atom(atab_table *t, const atab_atom *a)
{
    uint64_t h = atab__atom_hash(t, a);
    atab__shard *sh = &t->shards[atab__h_shard(h)];
    atab__shard_take(t, sh);
    int found = atab__probe(atab__arr_of(*sh->arr), h, atab__match_atom, a, NULL) != NULL;
    atab__shard_drop(sh);
    return found;
}
#endif

/* A release's end, after its section: the sweeps it may start (its full
** queue, or the table's threshold). */
static __attribute__((noinline)) int release_sweeps(atab_table *t, atab__rec *r, int rc)
{
    if (__atomic_load_n(&r->sweep_due, __ATOMIC_RELAXED))
        atab__queue_due(t, r);
    atab__maybe_sweep(t);
    return rc;
}

/* The end of atab_release's inline ways, after its section: ATAB_OK, and
** the sweeps when due (release_sweeps). */
ATAB__INLINE int release_done(atab_table *t, atab__rec *r)
{
    if (ATAB__UNLIKELY(__atomic_load_n(&r->sweep_due, __ATOMIC_RELAXED) ||
                       __atomic_load_n(&t->unused, __ATOMIC_RELAXED) >= t->sweep_threshold))
        return release_sweeps(t, r, ATAB_OK);
    return ATAB_OK;
}

#ifndef ATAB_DEBUG
/* A release whose reference is not kept as a spare (atab__unref_slow), in
** this thread's open section on r. Out of line, so the spare's path in
** atab_release saves no registers. */
static __attribute__((noinline)) int
release_unref(atab_table *t, atab__rec *r, const atab_atom *a, uint64_t h)
{
    int rc = atab__unref_slow(t, r, a, h);
    atab__leave(r);
    return release_sweeps(t, r, rc);
}
#endif

/* A release off the spare's path: from this thread's cache (`cached`: a
** spare kept there while others hold the atom, atab__unref, which needs
** the atom's hash), or from the count (atab__unref_counted); from the
** count alone for a thread with no record (debug builds have none). */
ATAB__INLINE int release_off_path(atab_table *t, const atab_atom *a, int cached)
{
    int rc;
#ifdef ATAB_DEBUG
    if (!owns_atom(t, a)) {   /* not an atom of this table: touch nothing */
        __atomic_add_fetch(&t->misuse, 1, __ATOMIC_RELAXED);
        atab__set_error(ATAB_EINVAL);
        return ATAB_EINVAL;
    }
#endif
    atab__rec *r = atab__rec_of(t);
    if (ATAB__LIKELY(r != NULL)) {
        uint64_t h = cached ? atab__atom_hash(t, a) : 0;   /* finds its cache entry */
        atab__enter_rec(r);
        rc = cached ? atab__unref(t, r, a, h) : atab__unref_counted(t, r, a);
        atab__leave(r);
        return release_sweeps(t, r, rc);
    }
    uint32_t c = atab__count(a);   /* as atab__unref_slow: others hold it */
    if (c > 1 && c < ATAB__REF_SAT && ATAB__UNLIKELY(!atab__atom_of(t, a))) {
        __atomic_add_fetch(&t->misuse, 1, __ATOMIC_RELAXED);
        atab__set_error(ATAB_EINVAL);
        return ATAB_EINVAL;
    }
    rc = atab__unref_direct(t, a);
    atab__maybe_sweep(t);
    return rc;
}

/* Another record, readers that must fence, no record, or an atom longer
** than 16 bytes. */
static __attribute__((noinline)) int release_general(atab_table *t, const atab_atom *a)
{
    return release_off_path(t, a, 1);
}

int atab__release_direct(atab_table *t, const atab_atom *a)
{
    /* an atom a cache kept spares of: this thread's may be among them, and
    ** a release that would take them off the count is refused (the cached
    ** path finds them); others have none here to hash for */
    if (__atomic_load_n(atab__count_word(a), __ATOMIC_RELAXED) & ATAB__REF_SPARED)
        return release_off_path(t, a, 1);
    return release_off_path(t, a, 0);
}

static __attribute__((noinline)) int release_invalid(void)
{
    atab__set_error(ATAB_EINVAL);
    return ATAB_EINVAL;
}

/* The common releases inline: an atom of up to 16 bytes hashed, this
** thread's last record (as the hit path finds it), then the reference kept
** in the atom's entry (atab__spare_keep), or a transient atom queued
** (atab__unref_sole); every other way is a tail call. */
HOT_ALIGN int atab_release(atab_table *t, const atab_atom *a)
{
    if (ATAB__UNLIKELY(!t || !a))
        return release_invalid();
    if (atab_is_static(a))
        return ATAB_OK;
#ifndef ATAB_DEBUG
    size_t len = atab_len(a);
    if (ATAB__LIKELY(atab__tls_last.id == __atomic_load_n(&t->fast_id, __ATOMIC_RELAXED) &&
                     len <= 16)) {
        atab__rec *r = atab__tls_last.rec;
        uint64_t h, p;   /* p: the hash's cache bits (hash.h), had sooner */
        int made = a == r->made && r->made_frees == __atomic_load_n(&t->frees,
                                                                    __ATOMIC_RELAXED);
        if (made) {
            /* The atom its insert made last, not freed since: its hash, and
            ** most likely its only reference (a transient atom), which no
            ** cache entry can keep as a spare, so queued first. */
            p = h = r->made_h;
            atab__enter_rec_nofence(r);
            if (ATAB__LIKELY(atab__cache_ours(r) && atab__unref_sole(r, a, h))) {
                atab__leave(r);
                return release_done(t, r);
            }
        } else {
            p = atab__hash_atom_pre(&t->hkeys, atab_chars(a), len);
            atab__enter_rec_nofence(r);
        }
        int ours = atab__cache_ours(r);
        if (ATAB__LIKELY(ours)) {
            uint64_t *e = atab__cache_slot(r, p), x = *e;
            if (ATAB__LIKELY(atab__ent_atom(x) == a && atab__spare_fits(a, x))) {
                *e = x + ATAB__ENT_ONE;   /* kept as a spare (atab__spare_keep) */
                atab__leave(r);
                return release_done(t, r);
            }
        }
        if (!made)
            h = atab__hash_len(&t->hkeys, p, len);
        if (ATAB__LIKELY(ours && atab__unref_sole(r, a, h))) {
            atab__leave(r);
            return release_done(t, r);
        }
        return release_unref(t, r, a, h);
    }
#endif
    return release_general(t, a);
}

const atab_atom *atab_ref(const atab_atom *a)
{
    if (a && !atab_is_static(a))
        atab__count_take(a, 1);
    return a;
}

/* Each a release of its own (a refused one changes nothing, so the rest go
** on); the error reported is the first one. */
int atab_release_all(atab_table *t, const atab_atom *const *atoms, size_t n)
{
    int first = ATAB_OK;
    if (!t || (!atoms && n)) {
        atab__set_error(ATAB_EINVAL);
        return ATAB_EINVAL;
    }
    for (size_t i = 0; i < n; i++) {
        int rc = atoms[i] ? atab_release(t, atoms[i]) : ATAB_OK;   /* NULL: skipped */
        if (first == ATAB_OK)
            first = rc;
    }
    if (first != ATAB_OK)
        atab__set_error(first);   /* the first, not the last */
    return first;
}
