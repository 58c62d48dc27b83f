/* SPDX-License-Identifier: MIT */
/*
** table.c - the atom table's slot arrays: sizing them, inserting into
** them under the shard's lock, rebuilding them, and the list of replaced
** arrays that readers may still probe. The hot path is intern.c (the
** lock-free hit, and release), the sweep sweep.c, the table's creation,
** free and whole-table calls life.c. Layout in table.h, the probe in
** probe.h, sections and spare references in thread.h, counts in atom.h.
**
** A hit (intern.c) is: hash, enter a section, this thread's cache or one
** probe (lock-free), a spare reference, leave. A miss takes the shard's
** lock, probes again, and inserts (here). A release puts the reference
** back in the cache, or drops it from the atom's count; an atom whose
** count reaches 0 stays in the table, unused, and a hit revives it,
** until a sweep (sweep.c) frees it.
*/
#include <stdlib.h>

#include "atab_int.h"
#include "probe.h"

/* Load policy. An array is rebuilt when its full slots would pass
** LOAD_NUM/LOAD_DEN of it (deleted slots are free for inserts), or when both of a new key's groups are full,
** into the smallest size class that holds the full slots at
** GROW_NUM/GROW_DEN (the next class up, 1.2-1.25x, as a rule). So every key
** sits in one of its two groups. Chosen on the bundled corpus (make
** membytes; bench/probes.c for where keys sit), 16-slot groups, when an
** insert took the less full of its groups:
**   15/16 and 13/16: 12.38 table bytes an atom, 61% of keys in group A,
**                    none past B
**   29/32 and 13/16: 12.66;  7/8 and 3/4: 12.85; 15/16 and 3/4: 13.21
** With A taken while it has room, 95% of keys sit in A and the arrays'
** size is within 0.2% of that (seeds 1-8).
** With 8-slot groups at 7/8, 2% of the last keys went past both groups
** (up to 7 groups more), and a rebuild is what keeps them out.
** A shard of GROW_BIG_AT full slots or more grows to GROW_BIG_NUM/GROW_DEN
** instead (about 1.5x a step): at 1.2x its keys were moved 5 to 6 times
** each on the way to 3,000 a shard (200,000 C-header names), and rebuilds
** were an eighth of the first pass's instructions. Smaller shards (the
** bundled corpus's) keep the tighter steps, where memory counts most. */
#ifndef LOAD_NUM
#define LOAD_NUM 15
#define LOAD_DEN 16
#endif
#ifndef GROW_NUM
#define GROW_NUM 13
#define GROW_DEN 16
#endif
#ifndef GROW_BIG_AT
#define GROW_BIG_AT 256
#endif
#ifndef GROW_BIG_NUM
#define GROW_BIG_NUM 10
#endif

/* ---- slot arrays (shard lock held) ---- */

#define G(c) ((uint32_t)(((uint64_t)(4 + ((c) & 3)) << ((c) >> 2)) / ATAB__GROUP_BYTES))
#define G4(c) G(c), G(c + 1), G(c + 2), G(c + 3)
#define G16(c) G4(c), G4(c + 4), G4(c + 8), G4(c + 12)
const uint32_t atab__code_groups[ATAB__MAX_CODE + 1] = {
    G16(0), G16(16), G16(32), G16(48), G16(64), G16(80)};
#undef G
#undef G4
#undef G16

/* The array of a shard that has none: one group of empty slots. */
const uint64_t atab__no_slots[ATAB__GROUP / 8] __attribute__((aligned(16))) = {UINT64_C(0x8080808080808080),
                                                  UINT64_C(0x8080808080808080)};

/* The code of an array's block: the smallest with its count of groups. */
unsigned atab__code_of(uint64_t word)
{
    size_t n = atab__arr_of(word).ngroups;
    unsigned code = 16;
    while (atab__code_groups[code] < n)
        code++;
    return code;
}

/* The next code up whose blocks hold more groups than `code`'s. */
static unsigned next_code(unsigned code)
{
    unsigned next = code + 1;
    while (next < ATAB__MAX_CODE && atab__code_groups[next] <= atab__code_groups[code])
        next++;
    return next;
}

/* Where an insert of h goes, given the free (empty or deleted) slots fa
** and fb of its groups A and B: a free slot of A, else of B; when both are
** full, the first free slot past B with `overflow` (which is then set to
** 2: the caller flags the array), else SIZE_MAX. There is one: the load
** stays below 1. */
static size_t pick_free(atab__arr v, uint64_t h, uint32_t fa, uint32_t fb, int *overflow)
{
    if (fa)
        return atab__h_group(h, v.ngroups) * ATAB__GROUP + (unsigned)__builtin_ctz(fa);
    size_t b = atab__h_group2(h, v.ngroups);
    if (fb)
        return b * ATAB__GROUP + (unsigned)__builtin_ctz(fb);
    for (size_t g = b; *overflow;) {
        if (++g == v.ngroups)
            g = 0;
        uint32_t f = atab__group_read(v, g, 0).free;
        if (f) {
            *overflow = 2;
            return g * ATAB__GROUP + (unsigned)__builtin_ctz(f);
        }
    }
    return SIZE_MAX;
}

/* pick_free, reading groups A and B. */
static size_t find_free(atab__arr v, uint64_t h, int *overflow)
{
    return pick_free(v, h, atab__group_read(v, atab__h_group(h, v.ngroups), 0).free,
                     atab__group_read(v, atab__h_group2(h, v.ngroups), 0).free, overflow);
}

/* atab__put_at of slot i of array v. */
ATAB__INLINE void put(atab__arr v, size_t i, uint64_t s, uint64_t h)
{
    atab__put_at(atab__group_ctrl(v, i / ATAB__GROUP), i % ATAB__GROUP, s, h);
}

void atab__free_arr(atab_table *t, uint64_t word)
{
    if (atab__is_array(word))
        atab__arr_free(t, atab__arr_of(word).base, atab__arr_bytes(word));
}

int atab__retire_array(atab_table *t, uint64_t word)
{
    int kept = 0;
    if (!atab__is_array(word))
        return 1;   /* atab__no_slots: nothing to free */
    if (atab__arr_bytes(word) > ATAB__RETIRED_BYTES || t->memory_limit)
        return 0;
    atab__lock_take(&t->retired_lock);
    if (t->n_retired < ATAB__RETIRED_MAX) {
        t->retired[t->n_retired] = word;
        __atomic_store_n(&t->n_retired, t->n_retired + 1, __ATOMIC_RELAXED);
        kept = 1;
    }
    atab__lock_drop(&t->retired_lock);
    return kept;
}

size_t atab__retired_take(atab_table *t, uint64_t *out)
{
    if (!__atomic_load_n(&t->n_retired, __ATOMIC_RELAXED))
        return 0;
    atab__lock_take(&t->retired_lock);
    size_t n = t->n_retired;
    memcpy(out, t->retired, n * sizeof *out);
    __atomic_store_n(&t->n_retired, 0, __ATOMIC_RELAXED);
    atab__lock_drop(&t->retired_lock);
    return n;
}

/* Frees `word`, an array that a growing insert replaced and the retired
** list had no room for, after a grace period of its own, and the list's
** arrays with it. */
static void free_after_grace(atab_table *t, uint64_t word)
{
    uint64_t old[ATAB__RETIRED_MAX];
    size_t n = atab__retired_take(t, old);
    atab__synchronize(t);
    for (size_t i = 0; i < n; i++)
        atab__free_arr(t, old[i]);
    atab__free_arr(t, word);
}

/* The smallest size class whose groups hold n full slots at the growth
** load (one group at least). */
unsigned atab__code_for(size_t n)
{
    unsigned code = 16, num = n >= GROW_BIG_AT ? GROW_BIG_NUM : GROW_NUM;
    while (code < ATAB__MAX_CODE && (atab__code_groups[code] == 0 ||
                                     atab__code_groups[code] * ATAB__GROUP * num < n * GROW_DEN))
        code++;
    return code;
}

#ifndef ATAB_DEBUG
#define FILL_COUNTS 2048   /* the most groups whose fill counts fill() keeps on its stack */
#else
#define FILL_COUNTS 8      /* debug builds test both ways */
#endif

/* Copies the full slots of array word `from` into the empty array of word
** `to`; returns `to`, flagged if a key had to go past its two groups. A
** key goes to its group A's first free slot, else as find_free places it;
** its groups come from the bits its slot and control byte keep. The new
** array's groups fill from their first slot up, so the first free slot of
** group g is the count of keys put there: kept in cnt[], where the array
** has FILL_COUNTS groups or fewer, so that a key's placement reads no
** control bytes just written one at a time (a 16-byte load of bytes stored
** singly waits for the stores to reach the cache). */
static uint64_t fill(unsigned shard, uint64_t to, uint64_t from)
{
    atab__arr nv = atab__arr_of(to), ov = atab__arr_of(from);
    int overflow = 1;
    uint8_t cnt[FILL_COUNTS];
    int counted = nv.ngroups <= FILL_COUNTS;
    if (counted)
        memset(cnt, 0, nv.ngroups);
    for (size_t g = 0; g < nv.ngroups; g++)
        memset(atab__group_ctrl(nv, g), ATAB__CTRL_EMPTY, ATAB__GROUP);
    for (size_t g = 0; atab__is_array(from) && g < ov.ngroups; g++) {
        const uint8_t *ctrl = atab__group_ctrl(ov, g);
        const uint64_t *slots = (const uint64_t *)(const void *)(ctrl + ATAB__GROUP);
        for (uint32_t full = ~atab__group_read(ov, g, 0).free & 0xffff; full; full &= full - 1) {
            unsigned j = (unsigned)__builtin_ctz(full);
            uint64_t h = atab__slot_hash(shard, ctrl[j], slots[j]);   /* all that places it */
            size_t ga = atab__h_group(h, nv.ngroups);
            uint8_t *na = atab__group_ctrl(nv, ga);
            unsigned k;
            if (counted) {
                k = cnt[ga];
            } else {
                uint32_t fa = atab__group_read(nv, ga, 0).free;
                k = fa ? (unsigned)__builtin_ctz(fa) : ATAB__GROUP;
            }
            if (ATAB__LIKELY(k < ATAB__GROUP)) {
                ((uint64_t *)(void *)(na + ATAB__GROUP))[k] = slots[j];
                na[k] = ctrl[j];
                if (counted)
                    cnt[ga] = (uint8_t)(k + 1);
                continue;
            }
            size_t i = find_free(nv, h, &overflow);
            *atab__slot_ptr(nv, i) = slots[j];
            atab__group_ctrl(nv, i / ATAB__GROUP)[i % ATAB__GROUP] = ctrl[j];
            if (counted)
                cnt[i / ATAB__GROUP] = (uint8_t)(i % ATAB__GROUP + 1);
        }
    }
    return overflow == 2 ? to | ATAB__ARR_OVERFLOW : to;
}

/* A new block of size class `code` as an array word; 0 (error set) when
** none can be had. */
static uint64_t new_block(atab_table *t, unsigned code)
{
    size_t bytes = atab__code_bytes(code);
    void *blk = atab__arr_alloc(t, bytes);
    if (!blk)
        return 0;
    if ((uint64_t)(uintptr_t)blk >> 48 || (uintptr_t)blk % 16) {   /* as no memory */
        atab__arr_free(t, blk, bytes);
        atab__set_error(ATAB_ENOMEM);
        return 0;
    }
    return atab__arr_word(blk, atab__code_groups[code]);
}

/* The full slots an array word's array takes before an insert grows it:
** LOAD_NUM/LOAD_DEN of its slots (reserve), below the 32-bit counters'
** end. */
static uint32_t load_limit(uint64_t word)
{
    size_t cap = atab__is_array(word) ? atab__arr_cap(atab__arr_of(word)) : 0;
    size_t n = cap * LOAD_NUM / LOAD_DEN;
    return n < 0x7fffffff ? (uint32_t)n : 0x7fffffff;
}

/* Moves a locked shard's full slots into a new array of size class `code`
** (atab__no_slots when code is 0) and publishes it; where a key would have
** to go past its two groups, up to two classes larger instead. Returns the
** old array's word, which readers may still be probing (free it after a
** grace period), or UINT64_MAX when the allocation failed: the old array
** stays (a failed rebuild is benign, it only costs speed). */
uint64_t atab__rebuild(atab_table *t, atab__shard *sh, unsigned code)
{
    uint64_t old = *sh->arr, word = atab__no_arr();
    atab_status saved = atab_last_error();
    for (unsigned tries = 0; code; tries++, code = next_code(code)) {
        uint64_t blk = new_block(t, code);
        if (!blk && !tries)
            return UINT64_MAX;
        if (!blk) {
            atab__set_error(saved);
            break;   /* keep the overflowing one */
        }
        atab__free_arr(t, word);
        word = fill((unsigned)(sh - t->shards), blk, old);
        if (!(word & ATAB__ARR_OVERFLOW) || tries == 2 || next_code(code) >= ATAB__MAX_CODE)
            break;
    }
    __atomic_store_n(sh->arr, word, __ATOMIC_RELEASE);
    sh->limit = load_limit(word);
    return old;
}

/* After an allocation the allocator or the memory limit refused, under
** the lock of the shard it was for: gives back the blocks this thread's
** record keeps for new atoms and frees the chunks left empty (those alone
** for a thread with no record; thread.h: atab__recycled_free), as an
** atom's refusal does (new_atom). Non-zero when that freed anything, so
** the allocation may be tried again. */
static int give_way(atab_table *t)
{
    size_t *acct = atab__acct(t);
    atab__rec *r = acct ? atab__tls_last.rec : NULL;
    return r ? atab__recycled_free(t, r) : atab__chunks_purge(t);
}

/* Makes room for one more full slot in a locked shard; *retired receives
** an old array to free after a grace period. A failed growth is benign
** while a free slot would remain; else -1 with the growth's error
** (ATAB_ENOMEM or ATAB_ELIMIT), as with 2^31 - 1 full slots (ATAB_ENOMEM).
** 0 when the insert may go ahead. */
static int reserve(atab_table *t, atab__shard *sh, uint64_t *retired)
{
    size_t cap = atab__shard_cap(sh), full = sh->used;   /* deleted slots are free */
    if (sh->used >= 0x7fffffff) {   /* 32-bit counters */
        atab__set_error(ATAB_ENOMEM);
        return -1;
    }
    if (full < sh->limit)   /* below LOAD_NUM/LOAD_DEN of its slots (load_limit) */
        return 0;
    atab_status saved = atab_last_error();
    unsigned code = atab__code_for((size_t)sh->used + 1);
    uint64_t old = UINT64_MAX;
    if (atab__is_array(*sh->arr) && code <= atab__code_of(*sh->arr))
        atab__set_error(ATAB_ENOMEM);   /* the largest class already (code_for stops
                                           there): a rebuild would only copy it, so
                                           it is a failed growth */
    else if ((old = atab__rebuild(t, sh, code)) == UINT64_MAX && give_way(t)) {
        atab_status err = atab_last_error();
        if ((old = atab__rebuild(t, sh, code)) == UINT64_MAX)
            atab__set_error(err);   /* refused again: the first refusal's error */
        else
            atab__set_error(saved);   /* served on the second try: no error */
    }
    if (old != UINT64_MAX) {
        *retired = old;
        return 0;
    }
    if (full + 2 <= cap) {
        atab__set_error(saved);   /* benign: keep the fuller array */
        return 0;
    }
    return -1;
}

/* Frees a slot of full group g of a shard (its lock held) by moving one of
** its keys that sits in its group A to its group B, where there is room;
** the slot's index, or SIZE_MAX. The key is copied before its old slot is
** emptied, and probes read A before B, so a probe racing the move finds it
** in one or the other (a move from B to A could be missed: never made).
** The keys' groups come from their slots (table.h): no atom is read. */
static size_t kick(unsigned shard, atab__arr v, size_t g)
{
    for (size_t i = g * ATAB__GROUP; i < (g + 1) * ATAB__GROUP; i++) {
        uint64_t s = *atab__slot_ptr(v, i);
        uint64_t h = atab__slot_hash(shard, atab__group_ctrl(v, g)[i % ATAB__GROUP], s);
        size_t b = atab__h_group2(h, v.ngroups);
        uint32_t f;
        if (atab__h_group(h, v.ngroups) != g || b == g ||
            !(f = atab__group_read(v, b, 0).free))
            continue;
        put(v, b * ATAB__GROUP + (unsigned)__builtin_ctz(f), s, h);
        atab__set_ctrl(v, i, ATAB__CTRL_DELETED);   /* taken again at once by the caller */
        return i;
    }
    return SIZE_MAX;
}

/* A locked shard's groups A and B of a key, read once: its probe and its
** insert look at the same two. */
typedef struct ab_groups {
    uint64_t arr;        /* the array word they were read in */
    size_t ga, gb;       /* their indexes (gb: where b was read) */
    atab__group a, b;
} ab_groups;

/* Inserts slot value s for hash h into a locked shard; ab (when not NULL)
** holds its groups as the key's probe read them. When both of its
** groups are full, a key of either moves to its other group (kick); else
** the array grows a class (past half full only, so that keys crafted to
** share groups cannot make it grow without bound); where it does not, the
** key goes past them (benign: probes of this array read on past B). */
static __attribute__((noinline)) int
insert_any(atab_table *t, atab__shard *sh, uint64_t s, uint64_t h, uint64_t *retired,
           const ab_groups *ab)
{
    if (reserve(t, sh, retired) != 0)
        return -1;
    atab__arr v = atab__arr_of(*sh->arr);
    int overflow = 0;
    size_t i = ab && ab->arr == *sh->arr ? pick_free(v, h, ab->a.free, ab->b.free, &overflow)
                                         : find_free(v, h, &overflow);   /* grown since */
    if (i == SIZE_MAX && (i = kick(atab__h_shard(h), v, atab__h_group(h, v.ngroups))) == SIZE_MAX)
        i = kick(atab__h_shard(h), v, atab__h_group2(h, v.ngroups));
    if (i == SIZE_MAX) {
        unsigned code = atab__is_array(*sh->arr) ? next_code(atab__code_of(*sh->arr)) : 16;
        unsigned want = atab__code_for((size_t)sh->used + 1);
        atab_status saved = atab_last_error();
        uint64_t old = UINT64_MAX;
        if (!*retired && 2 * (size_t)sh->used >= atab__shard_cap(sh) && code < ATAB__MAX_CODE)
            old = atab__rebuild(t, sh, want > code ? want : code);
        if (old != UINT64_MAX)
            *retired = old;
        atab__set_error(saved);
        v = atab__arr_of(*sh->arr);
        overflow = 1;
        i = find_free(v, h, &overflow);
        if (overflow == 2)   /* probes must look past B: before the key is there */
            __atomic_store_n(sh->arr, *sh->arr | ATAB__ARR_OVERFLOW, __ATOMIC_RELEASE);
    }
    put(v, i, s, h);
    sh->used++;
    return 0;
}

/* insert, inline where it is short: the shard below its load, and a free
** slot in group A or B as the key's probe read them (ab); else insert_any,
** out of line. */
ATAB__INLINE int insert(atab_table *t, atab__shard *sh, uint64_t s, uint64_t h,
                        uint64_t *retired, const ab_groups *ab)
{
    if (ATAB__LIKELY(ab->arr == *sh->arr && (ab->a.free | ab->b.free) && sh->used < sh->limit)) {
        uint32_t f = ab->a.free ? ab->a.free : ab->b.free;
        uint8_t *ctrl = atab__group_ctrl(atab__arr_of(ab->arr), ab->a.free ? ab->ga : ab->gb);
        atab__put_at(ctrl, (unsigned)__builtin_ctz(f), s, h);
        sh->used++;
        return 0;
    }
    return insert_any(t, sh, s, h, retired, ab);
}

/* ---- finding and inserting under the shard's lock ---- */

/* After a growth dropped its shard's lock: the array it replaced, which
** readers may be on, is freed at once when this thread is alone on t, else
** kept on the retired list, else freed after a grace period of its own.
** Till then it is in this thread's hands alone, counted in
** t->growths_freeing (from under the shard's lock), which a fork waits to
** see at 0 (thread.c, "fork"); nothing here takes g_lock. */
static void retire_replaced(atab_table *t, uint64_t retired)
{
    ATAB__PAUSE("grow:retire", t);
    if (atab__alone(t)) {
        atab__free_arr(t, retired);   /* no reader but this thread */
    } else if (!atab__retire_array(t, retired)) {
        ATAB__PAUSE("grow:free", t);
        free_after_grace(t, retired);
    }
    __atomic_sub_fetch(&t->growths_freeing, 1, __ATOMIC_RELEASE);
}

/* A carved block for a new atom of len bytes: one this thread kept from its
** sweep, else one from its current chunk (chunk.h); NULL (error set) when
** no chunk can be had, even after this thread's kept blocks went back to
** theirs (the memory limit counts the chunks they hold). A block had on
** that second try leaves the last error as it was. */
static atab_atom *carve_block(atab_table *t, atab__rec *r, size_t len)
{
    atab_atom *b = r ? atab__recycled_take(r, t->queue_cap, len) : NULL;
    if (b)
        return b;
    atab__bump *bump = r ? &r->bump : NULL;
    atab_status saved = atab_last_error();
    if ((b = atab__chunk_carve(t, bump, atab__block_bytes(len))) == NULL && r &&
        atab__recycled_free(t, r) && (b = atab__chunk_carve(t, bump, atab__block_bytes(len))))
        atab__set_error(saved);   /* served on the second try: no error */
    return b;
}

/* A new atom for key k (count 1), or NULL (error set): carved (carve_block)
** or, past ATAB__CHUNK_MAX_BLOCK, an allocation of its own. When that
** allocation fails while this thread keeps blocks or chunks lie empty,
** they go back first (the chunks alone for a thread with no record) and
** it is tried again. */
static atab_atom *new_atom(atab_table *t, const atab__key *k)
{
    size_t *acct = atab__acct(t);
    atab__rec *r = acct ? atab__tls_last.rec : NULL;
    if (atab__carved(k->len)) {
        atab_atom *b = carve_block(t, r, k->len);
        if (b && k->s && k->len <= ATAB__SHORT_KEY)
            return atab__atom_init_short(b, k->s, k->len);
        return b ? atab__atom_new(t, acct, k, b) : NULL;
    }
    atab_status saved = atab_last_error();
    atab_atom *a = atab__atom_new(t, acct, k, NULL);
    if (!a && give_way(t) && (a = atab__atom_new(t, acct, k, NULL)))
        atab__set_error(saved);   /* served on the second try: no error */
    return a;
}

/* The atom of key k in a locked shard's array word arr, or NULL; *ab
** receives the key's groups A and B, for its insert. The walk is
** atab__probe's (probe.h), with both groups read at once: nothing moves
** under the lock. */
static const atab_atom *find_locked(uint64_t arr, const atab__key *k, ab_groups *ab)
{
    atab__arr v = atab__arr_of(arr);
    unsigned c = atab__h_ctrl(k->hash);
    size_t ga = atab__h_group(k->hash, v.ngroups), gb = atab__h_group2(k->hash, v.ngroups);
    ab->arr = arr;
    ab->ga = ga, ab->gb = gb;
    ab->a = atab__group_read(v, ga, c);
    ab->b = (atab__group){0, 0, 0};
    const atab_atom *a = atab__group_find(v, ga, ab->a.match, k->hash, atab__match_key, k, NULL);
    if (a || ab->a.empty)
        return a;   /* A never filled: the key is nowhere else (and goes to A) */
    ab->b = atab__group_read(v, gb, c);
    a = atab__group_find(v, gb, ab->b.match, k->hash, atab__match_key, k, NULL);
    return a || !v.overflow ? a : atab__probe_from_b(v, k->hash, atab__match_key, k, NULL);
}

/* Under the shard's lock: finds the key again (the lock-free probe that
** missed read no insert count: that line is the writers'), else a static
** atom (cached in the shard, so later hits are one lock-free probe), else
** with `insert_new` a new atom: `made` when not NULL (made for k before the
** lock: freed when not used). A dynamic atom found gets a reference on its
** count. Called outside any section: the grace period after a rebuild
** waits for them. */
static const atab_atom *find_or_insert_locked(atab_table *t, const atab__key *k, const char *u8,
                                              int insert_new, atab_atom *made)
{
    atab__shard *sh = atab__shard_of(t, k->hash);
    uint64_t retired = 0;
    const atab_atom *a = NULL;
    ab_groups ab;

    atab__shard_take(t, sh);
    if ((a = find_locked(*sh->arr, k, &ab)) != NULL) {
        if (!atab_is_static(a))
            atab__count_take(a, 1);   /* never dead under the lock */
    } else if ((a = atab__static_lookup(t, u8, k->len)) != NULL) {
        atab_status saved = atab_last_error();
        if (insert(t, sh, atab__slot_make(a, k->hash), k->hash, &retired, &ab) == 0)
            sh->statics++;
        atab__set_error(saved);   /* failing to cache it is benign */
    } else if (insert_new) {
        atab_atom *na = made ? made : new_atom(t, k);
        made = NULL;
        if (na && insert(t, sh, atab__slot_make(na, k->hash), k->hash, &retired, &ab) != 0) {
            atab__atom_free(t, atab__acct(t), na);
            na = NULL;
        }
        a = na;
    } else {
        atab__set_error(ATAB_OK);   /* absent is no error: clear a stale one */
    }
    if (retired)   /* counted under the lock: a fork that holds it sees the count */
        __atomic_add_fetch(&t->growths_freeing, 1, __ATOMIC_RELAXED);
    atab__shard_drop(sh);
    if (made)   /* not needed: the key was there, or is a static atom's */
        atab__atom_free(t, atab__acct(t), made);
    if (retired)
        retire_replaced(t, retired);
    return a;
}

const atab_atom *atab__find_or_insert_locked(atab_table *t, const atab__key *k,
                                             const char *u8, int insert_new)
{
    return find_or_insert_locked(t, k, u8, insert_new, NULL);
}

const atab_atom *atab__insert_short_locked(atab_table *t, const char *s, size_t len, uint64_t h,
                                           atab_atom *made)
{
    atab__key k = {s, NULL, 0, len, h};
    return find_or_insert_locked(t, &k, s, 1, made);
}

const atab_atom *atab__insert_made_locked(atab__rec *r, atab__shard *sh, const char *s,
                                          size_t len, uint64_t h, atab_atom *na)
{
    atab_table *t = r->t;
    if (sh->used < sh->limit) {
        atab__arr v = atab__arr_of(*sh->arr);
        size_t g = atab__h_group(h, v.ngroups);
        unsigned c = atab__h_ctrl(h);
        atab__group ga = atab__group_read(v, g, c);
        atab__short_key k = {s, len};   /* an atab__key only for the locked way */
        const atab_atom *a = atab__group_find(v, g, ga.match, h, atab__match_short, &k, NULL);
        if (!a && !ga.empty) {   /* as find_locked: B only past a full A */
            size_t g2 = atab__h_group2(h, v.ngroups);
            atab__group gb = atab__group_read(v, g2, c);
            a = atab__group_find(v, g2, gb.match, h, atab__match_short, &k, NULL);
            if (!ga.free)
                g = g2, ga.free = gb.free;
        }
        if (a) {   /* another thread's insert came first */
            if (!atab_is_static(a))
                atab__count_take(a, 1);   /* never dead under the lock */
            atab__shard_drop(sh);
            atab__atom_free(t, atab__acct(t), na);
            return a;
        }
        if (ga.free != 0 && !v.overflow) {   /* A's first free slot, else B's */
            put(v, g * ATAB__GROUP + (unsigned)__builtin_ctz(ga.free), atab__slot_make(na, h), h);
            sh->used++;
            atab__shard_drop(sh);
            return atab__made_by(r, na, h);
        }
    }
    atab__shard_drop(sh);
    const atab_atom *a = atab__insert_short_locked(t, s, len, h, na);
    return a == na ? atab__made_by(r, na, h) : a;
}

/* ---- whose atom ---- */

/* Tables made and not yet freed in this process (atomic; life.c counts
** them). */
size_t atab__live_tables;

/* Is dynamic atom a, which the caller holds (a reference, or a handle), one
** of t's? With no other table live, it is: an atom held is its live
** table's (the table's count rose before its first atom was made, so a
** holder reads 2 or more while another table lives). Else, held, it is
** linked (never killed), so a probe of its shard's array finds it there:
** in a section on this thread's record, else under the shard's lock.
** Another table's atom is in no slot of t. */
int atab__atom_of(atab_table *t, const atab_atom *a)
{
    if (__atomic_load_n(&atab__live_tables, __ATOMIC_RELAXED) < 2)
        return 1;
    uint64_t h = atab__atom_hash(t, a);
    atab__rec *r = atab__rec_of(t);
    int in;
    if (r) {
        atab__enter_rec(r);
        in = atab__in_table(t, a, h);
        atab__leave(r);
        return in;
    }
    atab__shard *sh = atab__shard_of(t, h);
    atab__shard_take(t, sh);
    in = atab__probe(atab__arr_of(*sh->arr), h, atab__match_atom, a, NULL) != NULL;
    atab__shard_drop(sh);
    return in;
}

/* ---- statistics and visits ---- */

/* array_fn for an array word's block, unless it is a pool's (the pool is
** visited whole: atab__chunks_visit). */
static void visit_array(atab__array_fn array_fn, void *ud, uint64_t word)
{
    size_t bytes;
    if (array_fn && atab__is_array(word) && !atab__pooled(bytes = atab__arr_bytes(word)))
        array_fn(ud, atab__arr_of(word).base, bytes);
}

void atab__table_visit_shards(atab_table *t, atab__array_fn array_fn, atab__visit_fn fn,
                              void *ud)
{
    for (unsigned i = 0; i < ATAB__SHARDS; i++) {
        atab__shard *sh = &t->shards[i];
        atab__shard_take(t, sh);   /* this shard only, never all */
        atab__arr v = atab__arr_of(*sh->arr);
        visit_array(array_fn, ud, *sh->arr);
        for (size_t j = 0; j < atab__arr_cap(v); j++)
            if (atab__slot_full(v, j))
                fn(ud, atab__slot_atom(*atab__slot_ptr(v, j)));
        atab__shard_drop(sh);
    }
    atab__lock_take(&t->retired_lock);
    for (uint32_t i = 0; i < t->n_retired; i++)
        visit_array(array_fn, ud, t->retired[i]);
    atab__lock_drop(&t->retired_lock);
}
