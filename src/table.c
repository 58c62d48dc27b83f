/* SPDX-License-Identifier: MIT */
/*
** table.c - the atom table, all of its life but the hot path (intern.c:
** the lock-free hit, and release): creation, slot arrays and inserts
** under the shard's lock, the sweep that frees unused atoms, statistics,
** external handles and the deferred free they allow. Layout in table.h,
** the probe in probe.h, sections and spare references in thread.h, counts
** in atom.h.
**
** A hit (intern.c) is: hash, enter a section, this thread's cache or one
** probe (lock-free), a spare reference, leave. A miss takes the shard's
** lock, probes again, and inserts (here). A release puts the reference
** back in the cache, or drops it from the atom's count; an atom whose
** count reaches 0 stays in the table, unused, and a hit revives it.
**
** Sweeps. The thread that brings an atom's count to 0 queues it
** (thread.h); when its queue is full it sweeps it after its section: each
** atom still at 0 is killed (a CAS that a revival racing it may win
** instead) and unlinked under its shard's lock, and freed after one grace
** period (one a thread's cache once kept spares of is left for a full
** sweep: atom.h). A full sweep (atab_gc, or unqueued zeros past the
** threshold) gives the caches' spares back, empties the queues, then
** visits every shard under its lock. Readers are never stopped: a
** lock-free probe that meets a killed atom treats it as absent and goes to
** the lock, where the atom is already gone.
*/
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

#include "atab_int.h"
#include "probe.h"

/* Load policy. An array is rebuilt when its full slots would pass
** LOAD_NUM/LOAD_DEN of it (deleted slots are free for inserts), or when both of a new key's groups are full,
** into the smallest size class that holds the full slots at
** GROW_NUM/GROW_DEN (the next class up, 1.2-1.25x, as a rule). So every key
** sits in one of its two groups. Chosen on the bundled corpus (make
** membytes; bench/probes.c for where keys sit), 16-slot groups:
**   15/16 and 13/16: 12.38 table bytes an atom, 61% of keys in group A,
**                    none past B
**   29/32 and 13/16: 12.66;  7/8 and 3/4: 12.85; 15/16 and 3/4: 13.21
** With 8-slot groups at 7/8, 2% of the last keys went past both groups
** (up to 7 groups more), and a rebuild is what keeps them out. */
#ifndef LOAD_NUM
#define LOAD_NUM 15
#define LOAD_DEN 16
#endif
#ifndef GROW_NUM
#define GROW_NUM 13
#define GROW_DEN 16
#endif
#define RETIRE_LOCAL 256       /* a sweep's retire buffer on the stack */
#define QUEUE_MAX 1024         /* atoms a thread queues before it sweeps them */

static inline atab__shard *shard_of(atab_table *t, uint64_t h)
{
    return &t->shards[atab__h_shard(h)];
}

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

static inline int is_array(uint64_t word)
{
    return (word & ATAB__ARR_ADDR) != (uintptr_t)atab__no_slots;
}

/* The code of an array's block: the smallest with its count of groups. */
static unsigned code_of(uint64_t word)
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

/* Slots in a shard's array; 0 with none. */
static size_t shard_cap(const atab__shard *sh)
{
    return is_array(*sh->arr) ? atab__arr_cap(atab__arr_of(*sh->arr)) : 0;
}

ATAB__INLINE void set_ctrl(atab__arr v, size_t i, unsigned byte)
{
    uint64_t *p = atab__ctrl_word_ptr(v, i / 8);
    uint64_t w = __atomic_load_n(p, __ATOMIC_RELAXED);
    ((unsigned char *)&w)[i % 8] = (unsigned char)byte;   /* byte i of the word: slot i */
    __atomic_store_n(p, w, __ATOMIC_RELEASE);
}

/* Set bits of a group mask (16 bits), without a libgcc call where the
** target has no popcount instruction. */
static unsigned popcount16(uint32_t m)
{
    m = m - ((m >> 1) & 0x5555);
    m = (m & 0x3333) + ((m >> 2) & 0x3333);
    m = (m + (m >> 4)) & 0x0f0f;
    return (m + (m >> 8)) & 0x1f;
}

/* Where an insert of h goes: a free (empty or deleted) slot of the less
** full of groups A and B; when both are full, the first free slot past B
** with `overflow` (which is then set to 2: the caller flags the array),
** else SIZE_MAX. There is one: the load stays below 1. */
static size_t find_free(atab__arr v, uint64_t h, int *overflow)
{
    size_t a = atab__h_group(h, v.ngroups), b = atab__h_group2(h, v.ngroups);
    uint32_t fa = atab__group_read(v, a, 0).free, fb = atab__group_read(v, b, 0).free;
    if (fa && popcount16(fa) >= popcount16(fb))
        return a * ATAB__GROUP + (unsigned)__builtin_ctz(fa);
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

/* Stores slot s for hash h: the slot first, then its control byte, so a
** reader that sees the byte sees the slot. */
static void put(atab__arr v, size_t i, uint64_t s, uint64_t h)
{
    __atomic_store_n(atab__slot_ptr(v, i), s, __ATOMIC_RELEASE);
    set_ctrl(v, i, atab__h_ctrl(h));
}

/* Empties slot i. Only probes of an array whose keys overflowed go on past
** group B, and only while groups have no empty slot: there, a slot of a
** group without one must stay marked deleted, so that those probes still
** pass through to the keys beyond. The slot
** keeps its old address until reused: readers that matched the old
** control byte still find the atom, which is freed only after a grace
** period. */
ATAB__INLINE void erase(atab__shard *sh, atab__arr v, size_t i)
{
    if (!v.overflow || atab__group_read(v, i / ATAB__GROUP, 0).empty) {
        set_ctrl(v, i, ATAB__CTRL_EMPTY);
    } else {
        set_ctrl(v, i, ATAB__CTRL_DELETED);
    }
    sh->used--;
}

static void free_arr(atab_table *t, uint64_t word)
{
    if (is_array(word))
        atab__free(t, atab__arr_of(word).base, atab__code_bytes(code_of(word)));
}

/* ---- retired arrays ----
** An insert that grew a shard does not wait for a grace period: the array
** it replaced goes on the table's retired list (table.h), and the next
** grace period that runs anyway (a queue sweep's, a full sweep's; atab_gc
** runs one for the list alone) frees it. free_unlinked takes the list
** before its grace period begins, so every array it frees was replaced
** before then, and no reader can still be on it after. Where the list is
** full or the array large, or the table has a memory limit (which the
** list's arrays would count against until then), the grower waits for a
** grace period of its own, as with no list, and frees the list's arrays
** with it. */

/* Puts a replaced array on the list; 0 when it does not go there. */
static int retire_array(atab_table *t, uint64_t word)
{
    int kept = 0;
    if (!is_array(word))
        return 1;   /* atab__no_slots: nothing to free */
    if (atab__code_bytes(code_of(word)) > ATAB__RETIRED_BYTES || t->memory_limit)
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

/* Empties the list into out[ATAB__RETIRED_MAX] before a grace period;
** how many it took. One that a racing grower adds after the hint is read
** waits for the next grace period. */
static size_t retired_take(atab_table *t, uint64_t *out)
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

/* The smallest size class whose groups hold n full slots at the growth
** load (one group at least). */
static unsigned code_for(size_t n)
{
    unsigned code = 16;
    while (code < ATAB__MAX_CODE && (atab__code_groups[code] == 0 ||
                                     atab__code_groups[code] * ATAB__GROUP * GROW_NUM < n * GROW_DEN))
        code++;
    return code;
}

/* Copies the full slots of array word `from` into the empty array of word
** `to`; returns `to`, flagged if a key had to go past its two groups. */
static uint64_t fill(atab_table *t, uint64_t to, uint64_t from)
{
    atab__arr nv = atab__arr_of(to), ov = atab__arr_of(from);
    int overflow = 1;
    for (size_t g = 0; g < nv.ngroups; g++)
        memset(atab__group_ctrl(nv, g), ATAB__CTRL_EMPTY, ATAB__GROUP);
    for (size_t j = 0; is_array(from) && j < atab__arr_cap(ov); j++) {
        if (atab__slot_full(ov, j)) {
            uint64_t s = *atab__slot_ptr(ov, j);
            uint64_t h = atab__atom_hash(t, atab__slot_atom(s));
            size_t i = find_free(nv, h, &overflow);
            *atab__slot_ptr(nv, i) = s;   /* same tag: the hash did not change */
            atab__group_ctrl(nv, i / ATAB__GROUP)[i % ATAB__GROUP] = (uint8_t)atab__h_ctrl(h);
        }
    }
    return overflow == 2 ? to | ATAB__ARR_OVERFLOW : to;
}

/* A new block of size class `code` as an array word; 0 (error set) when
** none can be had. */
static uint64_t new_block(atab_table *t, unsigned code)
{
    size_t bytes = atab__code_bytes(code);
    void *blk = atab__alloc(t, bytes);
    if (!blk)
        return 0;
    if ((uint64_t)(uintptr_t)blk >> 48 || (uintptr_t)blk % 16) {   /* as no memory */
        atab__free(t, blk, bytes);
        atab__set_error(ATAB_ENOMEM);
        return 0;
    }
    return atab__arr_word(blk, atab__code_groups[code]);
}

/* Moves a locked shard's full slots into a new array of size class `code`
** (atab__no_slots when code is 0) and publishes it; where a key would have
** to go past its two groups, up to two classes larger instead. Returns the
** old array's word, which readers may still be probing (free it after a
** grace period), or UINT64_MAX when the allocation failed: the old array
** stays (a failed rebuild is benign, it only costs speed). */
static uint64_t rebuild(atab_table *t, atab__shard *sh, unsigned code)
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
        free_arr(t, word);
        word = fill(t, blk, old);
        if (!(word & ATAB__ARR_OVERFLOW) || tries == 2 || next_code(code) >= ATAB__MAX_CODE)
            break;
    }
    __atomic_store_n(sh->arr, word, __ATOMIC_RELEASE);
    return old;
}

/* Makes room for one more full slot in a locked shard; *retired receives
** an old array to free after a grace period. A failed growth is benign
** while a free slot would remain; then it is ATAB_ENOMEM. 0 when the
** insert may go ahead. */
static int reserve(atab_table *t, atab__shard *sh, uint64_t *retired)
{
    size_t cap = shard_cap(sh), full = sh->used;   /* deleted slots are free */
    if (sh->used >= 0x7fffffff) {   /* 32-bit counters */
        atab__set_error(ATAB_ENOMEM);
        return -1;
    }
    if ((full + 1) * LOAD_DEN <= cap * LOAD_NUM)
        return 0;
    atab_status saved = atab_last_error();
    uint64_t old = rebuild(t, sh, code_for((size_t)sh->used + 1));
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

/* Frees a slot of full group g (shard lock held) by moving one of its keys
** that sits in its group A to its group B, where there is room; the slot's
** index, or SIZE_MAX. The key is copied before its old slot is emptied,
** and probes read A before B, so a probe racing the move finds it in one
** or the other (a move from B to A could be missed: never made). */
static size_t kick(atab_table *t, atab__arr v, size_t g)
{
    for (size_t i = g * ATAB__GROUP; i < (g + 1) * ATAB__GROUP; i++) {
        uint64_t s = *atab__slot_ptr(v, i);
        uint64_t h = atab__atom_hash(t, atab__slot_atom(s));
        size_t b = atab__h_group2(h, v.ngroups);
        uint32_t f;
        if (atab__h_group(h, v.ngroups) != g || b == g ||
            !(f = atab__group_read(v, b, 0).free))
            continue;
        put(v, b * ATAB__GROUP + (unsigned)__builtin_ctz(f), s, h);
        set_ctrl(v, i, ATAB__CTRL_DELETED);   /* taken again at once by the caller */
        return i;
    }
    return SIZE_MAX;
}

/* Inserts slot value s for hash h into a locked shard. When both of its
** groups are full, a key of either moves to its other group (kick); else
** the array grows a class (past half full only, so that keys crafted to
** share groups cannot make it grow without bound); where it does not, the
** key goes past them (benign: probes of this array read on past B). */
static int insert(atab_table *t, atab__shard *sh, uint64_t s, uint64_t h, uint64_t *retired)
{
    if (reserve(t, sh, retired) != 0)
        return -1;
    atab__arr v = atab__arr_of(*sh->arr);
    int overflow = 0;
    size_t i = find_free(v, h, &overflow);
    if (i == SIZE_MAX && (i = kick(t, v, atab__h_group(h, v.ngroups))) == SIZE_MAX)
        i = kick(t, v, atab__h_group2(h, v.ngroups));
    if (i == SIZE_MAX) {
        unsigned code = is_array(*sh->arr) ? next_code(code_of(*sh->arr)) : 16;
        unsigned want = code_for((size_t)sh->used + 1);
        atab_status saved = atab_last_error();
        uint64_t old = UINT64_MAX;
        if (!*retired && 2 * (size_t)sh->used >= shard_cap(sh) && code < ATAB__MAX_CODE)
            old = rebuild(t, sh, want > code ? want : code);
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

/* ---- finding and inserting under the shard's lock ---- */

static void free_unlinked(atab_table *t, atab_atom *const *atoms, size_t n_atoms,
                          const uint64_t *arrays, size_t n_arrays, const atab_atom **q);

/* A new atom for key k (count 1), in a block this thread kept from its
** sweep when it has one of that length; or NULL (error set). When an
** allocation fails while this thread keeps blocks, they are freed and the
** allocation is tried again: the memory limit counts them. */
static atab_atom *new_atom(atab_table *t, const atab__key *k)
{
    size_t *acct = atab__acct(t);
    atab__rec *r = acct ? atab__tls_last.rec : NULL;
    atab_atom *a = atab__atom_new(t, acct, k, r ? atab__recycled_take(r, t->queue_cap, k->len)
                                                 : NULL);
    if (!a && r && atab__recycled_free(t, r))
        a = atab__atom_new(t, acct, k, NULL);
    return a;
}

/* Under the shard's lock: finds the key again (the lock-free probe that
** missed read no insert count: that line is the writers'), else a static
** atom (cached in the shard, so later hits are one lock-free probe), else
** with `insert` a new atom. A dynamic atom found gets a reference on its
** count. Called outside any section: the grace period after a rebuild
** waits for them. */
const atab_atom *atab__find_or_insert_locked(atab_table *t, const atab__key *k,
                                             const char *u8, int insert_new)
{
    atab__shard *sh = shard_of(t, k->hash);
    uint64_t retired = 0;
    atab_status saved = atab_last_error();
    const atab_atom *a = NULL;

    atab__lock_take(&sh->lock);
    if ((a = atab__probe(atab__arr_of(*sh->arr), k->hash, atab__match_key, k, NULL)) != NULL) {
        if (!atab_is_static(a))
            atab__count_take(a, 1);   /* never dead under the lock */
    } else if ((a = atab__static_lookup(t, u8, k->len)) != NULL) {
        if (insert(t, sh, atab__slot_make(a, k->hash), k->hash, &retired) == 0)
            sh->statics++;
        atab__set_error(saved);   /* failing to cache it is benign */
    } else if (insert_new) {
        atab_atom *na = new_atom(t, k);
        if (na && insert(t, sh, atab__slot_make(na, k->hash), k->hash, &retired) != 0) {
            atab__atom_free(t, atab__acct(t), na);
            na = NULL;
        }
        a = na;
    } else {
        atab__set_error(ATAB_OK);   /* absent is no error: clear a stale one */
    }
    atab__lock_drop(&sh->lock);
    if (retired) {   /* readers may be on the old array: free it after a grace period */
        ATAB__PAUSE("grow:retire", t);
        if (!retire_array(t, retired)) {
            ATAB__PAUSE("grow:free", t);
            free_unlinked(t, NULL, 0, &retired, 1, NULL);
        }
    }
    return a;
}

/* ---- the sweep ---- */

/* What a sweep unlinked and frees after one grace period: as many atoms
** as its buffer holds (on the stack, then grown from the table's allocator:
** one grace period, one membarrier, for a whole sweep), and the arrays it
** shrank. */
typedef struct retire {
    atab_atom **atoms;
    size_t n_atoms, cap;
    uint64_t arrays[4];
    size_t n_arrays;
    atab_atom *local[RETIRE_LOCAL];
} retire;

/* Room for one more atom, growing the buffer; -1 when it cannot grow
** (benign: the sweep frees what it holds, then goes on). */
static int retire_room(atab_table *t, retire *rt)
{
    if (rt->n_atoms < rt->cap)
        return 0;
    atab_status saved = atab_last_error();
    atab_atom **na = atab__alloc(t, 2 * rt->cap * sizeof *na);
    if (!na) {
        atab__set_error(saved);
        return -1;
    }
    memcpy(na, rt->atoms, rt->n_atoms * sizeof *na);
    if (rt->atoms != rt->local)
        atab__free(t, rt->atoms, rt->cap * sizeof *rt->atoms);
    rt->atoms = na;
    rt->cap *= 2;
    return 0;
}

/* Frees atoms[0..n_atoms) (NULL entries skipped) and arrays[0..n_arrays),
** unlinked by a sweep, once no reader can still see them, and the retired
** arrays with them; with `q` (the queue block being swept, away from its
** record), q keeps the atoms' blocks for its thread's next new atoms
** instead. */
static void free_unlinked(atab_table *t, atab_atom *const *atoms, size_t n_atoms,
                          const uint64_t *arrays, size_t n_arrays, const atab_atom **q)
{
    uint64_t old[ATAB__RETIRED_MAX];
    size_t n_old = retired_take(t, old);
    atab__synchronize(t);
    for (size_t i = 0; i < n_old; i++)
        free_arr(t, old[i]);
    if (q) {
        atab__recycle(t, q, atoms, n_atoms);
    } else {
        size_t *acct = atab__acct(t);
        for (size_t i = 0; i < n_atoms; i++)
            if (atoms[i])
                atab__atom_free(t, acct, atoms[i]);
    }
    for (size_t i = 0; i < n_arrays; i++)
        free_arr(t, arrays[i]);
}

/* Frees what a full sweep unlinked so far, and the retired arrays. */
static void retire_flush(atab_table *t, retire *rt)
{
    if (!rt->n_atoms && !rt->n_arrays && !__atomic_load_n(&t->n_retired, __ATOMIC_RELAXED))
        return;
    ATAB__PAUSE("sweep:free", t);
    free_unlinked(t, rt->atoms, rt->n_atoms, rt->arrays, rt->n_arrays, NULL);
    rt->n_atoms = rt->n_arrays = 0;
}

/* Shrinks a locked shard that a sweep left under an eighth used into the
** smaller array that holds twice its atoms (none when it has none), the
** old one appended to arrays[*n] to free after a grace period: a shard
** that churns between sweeps keeps room for as many again as it holds, and
** is rebuilt again only once that more than doubles or falls under a
** third. Deleted slots are no reason: inserts reuse them, and they
** lengthen no probe (erase). Benign on failure: the shard keeps its array. */
static void shrink(atab_table *t, atab__shard *sh, uint64_t *arrays, size_t *n)
{
    if (!is_array(*sh->arr) || 8 * (size_t)sh->used >= shard_cap(sh))
        return;
    unsigned code = sh->used ? code_for(2 * (size_t)sh->used) : 0;
    if (code && atab__code_groups[code] >= atab__arr_of(*sh->arr).ngroups)
        return;
    atab_status saved = atab_last_error();
    uint64_t old = rebuild(t, sh, code);
    atab__set_error(saved);
    if (old != UINT64_MAX && is_array(old))
        arrays[(*n)++] = old;
}

/* Sweeps one shard: kills and unlinks its atoms at count 0 (while the
** retire buffer has room; else the caller frees and comes back), then
** shrinks it, whether or not it freed any here (queue sweeps retire at
** most 4 arrays each, and may leave emptied shards their arrays). Returns
** how many it freed. */
static size_t sweep_shard(atab_table *t, atab__shard *sh, retire *rt)
{
    size_t freed = 0;
    atab__lock_take(&sh->lock);
    atab__arr v = atab__arr_of(*sh->arr);
    for (size_t i = 0; i < atab__arr_cap(v) && retire_room(t, rt) == 0; i++) {
        if (!atab__slot_full(v, i))
            continue;
        atab_atom *a = (atab_atom *)atab__slot_atom(*atab__slot_ptr(v, i));
        if (atab_is_static(a) || atab__count(a) != 0)
            continue;
        ATAB__PAUSE("sweep:kill", a);
        if (!atab__count_kill(a))
            continue;   /* revived just now */
        erase(sh, v, i);
        rt->atoms[rt->n_atoms++] = a;
        freed++;
    }
    shrink(t, sh, rt->arrays, &rt->n_arrays);
    atab__lock_drop(&sh->lock);
    return freed;
}

/* Frees every atom at count 0, shard by shard; sweep_lock is held. */
static size_t sweep(atab_table *t)
{
    retire rt;
    size_t freed = 0, got;
    rt.atoms = rt.local;
    rt.cap = RETIRE_LOCAL;
    rt.n_atoms = rt.n_arrays = 0;
    __atomic_add_fetch(&t->sweeps, 1, __ATOMIC_SEQ_CST);   /* odd: atab_foreach */
    __atomic_store_n(&t->unused, 0, __ATOMIC_RELAXED);
    /* spares back, queues emptied: every count is what holders hold */
    atab__flush_counts(t, 1, NULL, NULL);
    for (unsigned i = 0; i < ATAB__SHARDS; i++) {
        do {
            got = sweep_shard(t, &t->shards[i], &rt);
            freed += got;
            if (rt.n_atoms == rt.cap || rt.n_arrays == 4)
                retire_flush(t, &rt);
        } while (got && rt.n_atoms == 0);   /* the buffer filled: this shard again */
    }
    retire_flush(t, &rt);
    if (rt.atoms != rt.local)
        atab__free(t, rt.atoms, rt.cap * sizeof *rt.atoms);
    __atomic_add_fetch(&t->sweeps, 1, __ATOMIC_SEQ_CST);
    return freed;
}

size_t atab_gc(atab_table *t)
{
    if (!t)
        return 0;
    pthread_mutex_lock(&t->sweep_lock);
    size_t freed = sweep(t);
    pthread_mutex_unlock(&t->sweep_lock);
    return freed;
}

/* Sweeps the n atoms of a queue (this thread's, taken off its record: the
** block ATAB__QUEUE_BYTES describes), shard by shard under each shard's
** lock, taken once: an atom still at 0 is killed and unlinked, one revived
** is only taken off, and the shard may shrink; after one grace period the
** dead are freed. An atom at 0 that a cache has kept spares of (atom.h:
** SPARED) is taken off and counted towards t->unused instead, for a full
** sweep, which takes the caches' spares back before it kills. */
static void sweep_queue(atab_table *t, const atab_atom **q, uint32_t n)
{
    uint64_t *h = (uint64_t *)(void *)(q + t->queue_cap), arrays[4];
    uint16_t *by_shard = (uint16_t *)(void *)(atab__queue_kept(q, t->queue_cap) +
                                              ATAB__RECYCLE_LENS);
    uint16_t start[ATAB__SHARDS + 1] = {0};
    size_t dead = 0, n_arrays = 0, spared = 0;
    for (uint32_t i = 0; i < n; i++) {   /* a counting sort by shard */
        h[i] = atab__atom_hash(t, q[i]);
        start[atab__h_shard(h[i]) + 1]++;
    }
    for (unsigned s = 0; s < ATAB__SHARDS; s++)
        start[s + 1] += start[s];
    for (uint32_t i = 0; i < n; i++)
        by_shard[start[atab__h_shard(h[i])]++] = (uint16_t)i;
    for (uint32_t k = 0; k < n;) {
        atab__shard *sh = shard_of(t, h[by_shard[k]]);
        atab__lock_take(&sh->lock);
        do {
            uint32_t i = by_shard[k];
            ATAB__PAUSE("queue:kill", q[i]);
            uint32_t left = atab__count_unqueue(q[i], 1);
            if (left == ATAB__REF_DEAD) {
                atab__arr v = atab__arr_of(*sh->arr);
                size_t at;
                if (atab__probe(v, h[i], atab__match_atom, q[i], &at)) {   /* there: only its killer unlinks it */
                    erase(sh, v, at);
                    dead++;
                } else {
                    q[i] = NULL;   /* cannot be; were it, a leak is safer than a free */
                }
            } else {
                spared += left == 0;   /* at 0: SPARED (else revived) */
                q[i] = NULL;
            }
        } while (++k < n && shard_of(t, h[by_shard[k]]) == sh);
        if (n_arrays < 4)
            shrink(t, sh, arrays, &n_arrays);
        atab__lock_drop(&sh->lock);
    }
    if (spared)
        __atomic_add_fetch(&t->unused, spared, __ATOMIC_RELAXED);
    if (!dead && !n_arrays)
        return;
    ATAB__PAUSE("queue:free", t);
    free_unlinked(t, (atab_atom *const *)q, n, arrays, n_arrays, q);
}

void atab__queue_due(atab_table *t, atab__rec *r)
{
    uint32_t n = 0;
    const atab_atom **q = NULL;
    if (__atomic_load_n(&r->queue, __ATOMIC_RELAXED) && !(q = atab__queue_take(r, &n)))
        return;   /* a flusher holds r: later */
    if (n)
        sweep_queue(t, q, n);
    atab__queue_put(t, r, q);
}

void atab__sweep_at_threshold(atab_table *t)
{
    if (pthread_mutex_trylock(&t->sweep_lock) != 0)
        return;
    if (__atomic_load_n(&t->unused, __ATOMIC_RELAXED) >= t->sweep_threshold)
        sweep(t);
    pthread_mutex_unlock(&t->sweep_lock);
}

/* ---- statistics and visits ---- */

void atab__table_visit_shards(atab_table *t, atab__array_fn array_fn, atab__visit_fn fn,
                              void *ud)
{
    for (unsigned i = 0; i < ATAB__SHARDS; i++) {
        atab__shard *sh = &t->shards[i];
        atab__lock_take(&sh->lock);   /* this shard only, never all */
        atab__arr v = atab__arr_of(*sh->arr);
        if (is_array(*sh->arr) && array_fn)
            array_fn(ud, v.base, atab__code_bytes(code_of(*sh->arr)));
        for (size_t j = 0; j < atab__arr_cap(v); j++)
            if (atab__slot_full(v, j))
                fn(ud, atab__slot_atom(*atab__slot_ptr(v, j)));
        atab__lock_drop(&sh->lock);
    }
    atab__lock_take(&t->retired_lock);
    for (uint32_t i = 0; i < t->n_retired && array_fn; i++)
        array_fn(ud, atab__arr_of(t->retired[i]).base, atab__code_bytes(code_of(t->retired[i])));
    atab__lock_drop(&t->retired_lock);
}

size_t atab__table_unqueue_locked(atab_table *t)
{
    size_t zeros = 0;
    for (unsigned i = 0; i < ATAB__SHARDS; i++) {
        atab__arr v = atab__arr_of(t->arrs[i]);
        for (size_t j = 0; j < atab__arr_cap(v); j++) {
            const atab_atom *a;
            if (atab__slot_full(v, j) && !atab_is_static(a = atab__slot_atom(*atab__slot_ptr(v, j))) &&
                (__atomic_load_n(atab__count_word(a), __ATOMIC_RELAXED) & ATAB__REF_QUEUED))
                zeros += atab__count_unqueue(a, 0) == 0;
        }
    }
    return zeros;
}

static void stats_atom(void *ud, const atab_atom *a)
{
    atab_stats *out = ud;
    if (atab_is_static(a))
        return;
    out->atoms++;
    out->unused += atab__count(a) == 0;
}

int atab_get_stats(atab_table *t, atab_stats *out)
{
    if (!t || !out) {
        atab__set_error(ATAB_EINVAL);
        return ATAB_EINVAL;
    }
    memset(out, 0, sizeof *out);
    atab__flush_counts(t, 0, NULL, NULL);   /* counts exact: no spares held back */
    atab__table_visit_shards(t, NULL, stats_atom, out);
    for (unsigned i = 0; i < ATAB__SHARDS; i++) {
        atab__shard *sh = &t->shards[i];
        atab__lock_take(&sh->lock);
        out->statics_seen += sh->statics;
        out->capacity += shard_cap(sh);
        atab__lock_drop(&sh->lock);
    }
    out->bytes = atab__bytes(t);
    out->misuse = atab__misuse(t);
    return ATAB_OK;
}

size_t atab_count(atab_table *t)
{
    size_t n = 0;
    if (!t)
        return 0;
    for (unsigned i = 0; i < ATAB__SHARDS; i++) {
        atab__shard *sh = &t->shards[i];
        atab__lock_take(&sh->lock);
        n += sh->used - sh->statics;
        atab__lock_drop(&sh->lock);
    }
    return n;
}

/* atab_foreach: a shard's atoms are collected under its lock, each with a
** reference (so none is freed while fn has it) and the count it had, then
** fn runs with no lock held. Dropping those references must leave each
** atom as a release would: an atom that goes back to 0 is on a queue or
** counted towards t->unused, or a sweep would never find it. */
#define FOREACH_LOCAL 128

typedef struct seen_atom {
    const atab_atom *a;
    uint32_t count;    /* before our reference; UINT32_MAX when saturated */
    uint32_t queued;   /* it was at 0 on a thread's queue */
} seen_atom;

/* Collects a locked shard's dynamic atoms into v (room for `cap`), each
** with a reference; how many. Never dead under the lock. */
static size_t collect_shard(atab__shard *sh, seen_atom *v, size_t cap)
{
    atab__arr arr = atab__arr_of(*sh->arr);
    size_t n = 0;
    for (size_t j = 0; j < atab__arr_cap(arr) && n < cap; j++) {
        const atab_atom *a;
        if (!atab__slot_full(arr, j) || atab_is_static(a = atab__slot_atom(*atab__slot_ptr(arr, j))))
            continue;
        uint32_t w = __atomic_load_n(atab__count_word(a), __ATOMIC_RELAXED);
        atab__count_take(a, 1);   /* QUEUED stays: it is still its owner's */
        v[n].a = a;
        v[n].queued = (w & ~ATAB__REF_SPARED) == ATAB__REF_QUEUED;
        v[n++].count = w >= ATAB__REF_SAT ? UINT32_MAX : w & ATAB__REF_COUNT;
    }
    return n;
}

/* Drops the reference collect_shard took. An atom at 0 then goes back to 0
** counted towards t->unused only where nothing counts it otherwise: it was
** on a queue and its owner took it off while we held it (a queue sweep or
** a flush leaves a live atom uncounted), or it was counted before and a
** full sweep (which starts t->unused again from 0) ran meanwhile, `swept`.
** Else a visit never hastens a sweep. Others go as any release. */
static void uncollect(atab_table *t, const seen_atom *s, int swept)
{
    if (s->count != 0)
        atab__unref_direct(t, s->a);
    else if (atab__count_drop(s->a, 1, 0, 0) == ATAB__DROP_UNUSED && (s->queued || swept))
        __atomic_add_fetch(&t->unused, 1, __ATOMIC_RELAXED);
}

static int foreach_shard(atab_table *t, atab__shard *sh, atab_foreach_fn fn, void *ud)
{
    seen_atom local[FOREACH_LOCAL], *v = local;
    size_t cap = FOREACH_LOCAL, n;
    int rc = ATAB_OK;
    atab__lock_take(&sh->lock);
    if (sh->used - sh->statics > cap) {   /* allocated under the lock, as inserts do */
        cap = sh->used - sh->statics;
        if (!(v = atab__alloc(t, cap * sizeof *v))) {
            atab__lock_drop(&sh->lock);
            return atab_last_error();
        }
    }
    size_t sweeps = __atomic_load_n(&t->sweeps, __ATOMIC_SEQ_CST);
    n = collect_shard(sh, v, cap);
    atab__lock_drop(&sh->lock);
    for (size_t i = 0; i < n; i++) {
        if (rc == ATAB_OK)
            rc = fn(ud, v[i].a, v[i].count);
        size_t now = __atomic_load_n(&t->sweeps, __ATOMIC_SEQ_CST);
        uncollect(t, &v[i], (sweeps & 1) || now != sweeps);
    }
    if (v != local)
        atab__free(t, v, cap * sizeof *v);
    atab__maybe_sweep(t);
    return rc;
}

int atab_foreach(atab_table *t, atab_foreach_fn fn, void *ud)
{
    int rc = ATAB_OK;
    if (!t || !fn) {
        atab__set_error(ATAB_EINVAL);
        return ATAB_EINVAL;
    }
    atab__flush_counts(t, 0, NULL, NULL);   /* counts exact: no spares held back */
    for (unsigned i = 0; i < ATAB__SHARDS && rc == ATAB_OK; i++)
        rc = foreach_shard(t, &t->shards[i], fn, ud);   /* a failed list: error set */
    return rc;
}


/* ---- external handles ---- */

/* hstate is handles << 1 | CLOSING. The one who brings it to exactly
** CLOSING (no handles, closing) destroys the table: atab_table_free when
** no handle is out, else the last handle's release. Each side touches the
** table no more after its atomic step unless it is that one. */
#define CLOSING ((size_t)1)

const atab_atom *atab_external_acquire(atab_table *t, const atab_atom *a)
{
    if (!t || !a || (__atomic_load_n(&t->hstate, __ATOMIC_ACQUIRE) & CLOSING))
        return atab__fail(ATAB_EINVAL);
    if (atab_is_static(a))
        return a;   /* read-only data: no reference, no count */
    atab__rec *r = atab__rec_of(t);
    if (ATAB__LIKELY(r != NULL)) {
        atab__enter_rec(r);
        atab__ref(t, r, a, atab__atom_hash(t, a));   /* the caller holds a: never killed */
        atab__leave(r);
    } else {
        atab__count_take(a, 1);
    }
    __atomic_add_fetch(&t->hstate, 2, __ATOMIC_RELAXED);
    return a;
}

static void table_destroy(atab_table *t);

int atab_external_release(atab_table *t, const atab_atom *a)
{
    if (!t || !a) {
        atab__set_error(ATAB_EINVAL);
        return ATAB_EINVAL;
    }
    if (atab_is_static(a))
        return ATAB_OK;   /* never touches the table: it may be gone */
    int rc = atab_release(t, a);
    if (rc != ATAB_OK)
        return rc;
    ATAB__PAUSE("external_release:dropped", t);
    if (__atomic_sub_fetch(&t->hstate, 2, __ATOMIC_ACQ_REL) == CLOSING)
        table_destroy(t);   /* the last handle after atab_table_free */
    return ATAB_OK;
}

void atab_external_finalize_napi(void *env, void *data, void *hint)
{
    (void)env;
    atab_external_release(hint, atab_atom_of_chars(data));
}

void atab_external_finalize(void *data, void *hint)
{
    atab_external_release(hint, atab_atom_of_chars(data));
}

size_t atab_external_handles(const atab_table *t)
{
    return t ? __atomic_load_n(&t->hstate, __ATOMIC_RELAXED) >> 1 : 0;
}

/* ---- the table's life ---- */

/* A random seed per table (hash flooding); getrandom, else a mix of
** clock and addresses, which is weaker but never fails. */
static uint64_t random_seed(const void *salt)
{
    uint64_t seed;
    if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) == (ssize_t)sizeof seed)
        return seed;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ (uintptr_t)salt;
    return atab__hash_bytes(seed, (const char *)&seed, sizeof seed);
}

static int table_init(atab_table *t, const atab_options *o)
{
    t->seed = (o->flags & ATAB_FIXED_SEED) ? o->seed : random_seed(t);
    t->hkeys = atab__hash_keys(t->seed);
    t->sweep_threshold = o->sweep_threshold ? o->sweep_threshold : 10000;
    /* threads add their zeros to t->unused in batches of up to 32, at most
    ** 1/256 of the threshold: a sweep starts within that of it */
    t->zero_batch = (uint32_t)(t->sweep_threshold / 256 < 32 ? t->sweep_threshold / 256 : 32);
    if (!t->zero_batch)
        t->zero_batch = 1;
    t->queue_cap = t->sweep_threshold == SIZE_MAX ? 0
                   : t->sweep_threshold < QUEUE_MAX ? (uint32_t)t->sweep_threshold : QUEUE_MAX;
    t->memory_limit = o->memory_limit;
    t->checked_refs = (o->flags & ATAB_CHECKED_REFS) != 0;
    for (unsigned i = 0; i < ATAB__SHARDS; i++) {
        t->arrs[i] = atab__no_arr();
        t->shards[i].arr = &t->arrs[i];
    }
    pthread_mutex_init(&t->sweep_lock, NULL);
    atab__threads_init(t);
    if (atab__static_init(t, o) != 0)
        return -1;
    if (o->initial_capacity) {
        atab_status saved = atab_last_error();
        size_t per = o->initial_capacity / ATAB__SHARDS + 1;
        for (unsigned i = 0; i < ATAB__SHARDS; i++)
            rebuild(t, &t->shards[i], code_for(per));   /* benign; no old array */
        atab__set_error(saved);
    }
    return 0;
}

atab_table *atab_table_new(const atab_options *opts)
{
    static const atab_options defaults;
    const atab_options *o = opts ? opts : &defaults;
    const atab_allocator *al = o->allocator ? o->allocator : atab_default_allocator();
    if (!al->alloc || !al->free || (o->n_static_sets && !o->static_sets))
        return atab__fail(ATAB_EINVAL);
    if (o->memory_limit && o->memory_limit < ATAB__TABLE_ALLOC)
        return atab__fail(ATAB_ELIMIT);
    void *raw = al->alloc(al->ud, ATAB__TABLE_ALLOC);
    if (!raw)
        return atab__fail(ATAB_ENOMEM);
    atab_table *t = (atab_table *)(((uintptr_t)raw + 63) & ~(uintptr_t)63);
    memset(t, 0, sizeof *t);
    t->raw = raw;
    t->alloc = *al;
    t->bytes = ATAB__TABLE_ALLOC;
    if (table_init(t, o) != 0) {
        atab_status err = atab_last_error();
        table_destroy(t);
        return atab__fail(err);
    }
    return t;
}

/* Frees everything; no thread may use the table any more. */
static void table_destroy(atab_table *t)
{
    atab__threads_fini(t);
    for (unsigned i = 0; i < ATAB__SHARDS; i++) {
        atab__shard *sh = &t->shards[i];
        if (!is_array(*sh->arr))
            continue;   /* atab__no_slots: nothing in it, nothing to free */
        atab__arr v = atab__arr_of(*sh->arr);
        for (size_t j = 0; j < atab__arr_cap(v); j++) {
            if (!atab__slot_full(v, j))
                continue;
            const atab_atom *a = atab__slot_atom(*atab__slot_ptr(v, j));
            if (!atab_is_static(a))
                atab__atom_free(t, NULL, (atab_atom *)a);
        }
        free_arr(t, *sh->arr);
    }
    for (uint32_t i = 0; i < t->n_retired; i++)
        free_arr(t, t->retired[i]);
    pthread_mutex_destroy(&t->sweep_lock);
    atab__static_fini(t);
    atab_allocator al = t->alloc;
    al.free(al.ud, t->raw, ATAB__TABLE_ALLOC);
}

void atab_table_free(atab_table *t)
{
    if (!t)
        return;
    atab__host_cache_destroy(t);   /* dropped strings may release handles */
    if (__atomic_load_n(&t->hstate, __ATOMIC_ACQUIRE) != 0) {
        atab_gc(t);   /* handles out: free what none of them holds now */
        ATAB__PAUSE("table_free:closing", t);
        if (__atomic_add_fetch(&t->hstate, CLOSING, __ATOMIC_ACQ_REL) != CLOSING)
            return;   /* the last release destroys the table */
    }
    table_destroy(t);
}
