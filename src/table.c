/*
** table.c - the atom table: sharded open addressing, interning, lookup,
** deferred sweeping, statistics.
**
** The 64-bit seeded XXH3 hash of a string picks everything: its top
** ATAB__SHARD_BITS bits the shard, the next 16 bits a tag kept in the slot,
** the low 32 bits the home slot in the shard's array (scaled to its
** capacity, a jemalloc size class; see atab__arr_cap). Linear probing;
** deletions (sweeps only) leave tombstones, cleared when the array is
** rebuilt. A slot holds the atom pointer with the tag in its top 16 bits,
** so a probe rejects all but 1 in 65536 non-matching atoms without touching
** them, and a slot costs 8 bytes.
*/
#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

#include "atab_int.h"

/* Load policy. An array is rebuilt when live + tombstone slots would pass
** LOAD_NUM/LOAD_DEN of it, into the smallest size class that holds the
** live slots at GROW_NUM/GROW_DEN, so the load runs between those two.
** With power-of-two arrays grown at 3/4 the load ran 0.375-0.75 (0.57 on
** the bundled corpus: 13.98 slot bytes per atom). Size-class arrays at
** 13/16 max, 5/8 after growth: load 0.71-0.73 there (11.0 slot bytes per
** atom), for +2% instructions per hit and +4% per miss (callgrind, first
** 100k corpus ops). Measured alternatives, same corpus: 7/8 and 11/16,
** load 0.74 but +16% per miss; 7/8 and 5/8, load 0.66; 3/4 and 9/16,
** load 0.65. */
#ifndef LOAD_NUM
#define LOAD_NUM 13
#define LOAD_DEN 16
#endif
#ifndef GROW_NUM
#define GROW_NUM 5
#define GROW_DEN 8
#endif
#define MIN_CODE 4   /* 8 slots */

#define TAG_SHIFT (64 - ATAB__SHARD_BITS - 16)

static inline uint64_t hash_tag(uint64_t h)
{
    return (h >> TAG_SHIFT) & 0xffff;
}

/* Slot encoding. Where the pointer fits in 48 bits (every Linux x86-64 and
** arm64 process unless it asks mmap for more), bit 0 is set and the tag
** sits in bits 48-63. Otherwise the slot is the bare pointer (bit 0 clear:
** atoms are at least 4-aligned) and every probe compares the atom. */
static inline uint64_t slot_make(const atab_atom *a, uint64_t h)
{
    uint64_t p = (uint64_t)(uintptr_t)a;
    if ((p >> 48) == 0)
        return (hash_tag(h) << 48) | p | 1;
    return p;
}

static inline int slot_may_match(uint64_t s, uint64_t h)
{
    return !(s & 1) || (s >> 48) == hash_tag(h);
}

static inline atab__shard *shard_of(atab_table *t, uint64_t h)
{
    return &t->shards[h >> (64 - ATAB__SHARD_BITS)];
}

static uint64_t atom_hash(const atab_table *t, const atab_atom *a)
{
    return atab__hash_bytes(t->seed, atab_chars(a), atab_len(a));
}

static inline uint64_t load_slot(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* Finds the key in an array; safe without the shard lock inside a read
** section. On a miss, with ins non-NULL, *ins is where the key would go
** (the first tombstone or the empty slot that ended the probe). */
static const atab_atom *probe(uint64_t arr, const atab__key *k, size_t *ins)
{
    uint64_t *slots = atab__arr_slots(arr);
    size_t cap = atab__arr_cap(arr), i = atab__home(k->hash, cap);
    size_t first_tomb = SIZE_MAX;
    if (!arr)
        return NULL;
    for (;;) {
        uint64_t s = load_slot(&slots[i]);
        if (s == 0)
            break;
        if (s == ATAB__TOMB) {
            if (first_tomb == SIZE_MAX)
                first_tomb = i;
        } else if (slot_may_match(s, k->hash)) {
            const atab_atom *a = atab__slot_atom(s);
            if (atab__key_equals(k, a))
                return a;
        }
        if (++i == cap)
            i = 0;
    }
    if (ins)
        *ins = first_tomb != SIZE_MAX ? first_tomb : i;
    return NULL;
}

/* The hit path's probe: no tombstone bookkeeping, inlined. */
static inline __attribute__((always_inline)) const atab_atom *
probe_hit(uint64_t arr, const atab__key *k)
{
    uint64_t *slots = atab__arr_slots(arr);
    size_t cap = atab__arr_cap(arr), i = atab__home(k->hash, cap);
    uint64_t tag = hash_tag(k->hash);
    if (ATAB__UNLIKELY(!arr))
        return NULL;
    for (;;) {
        uint64_t s = load_slot(&slots[i]);
        if (s & 1) {
            if ((s >> 48) == tag && atab__key_equals(k, atab__slot_atom(s)))
                return atab__slot_atom(s);
        } else if (s == 0) {
            return NULL;
        } else if (s != ATAB__TOMB && atab__key_equals(k, atab__slot_atom(s))) {
            return atab__slot_atom(s);
        }
        if (++i == cap)
            i = 0;
    }
}

static void free_arr(atab_table *t, uint64_t arr)
{
    if (arr)
        atab__free(t, atab__arr_slots(arr), atab__arr_cap(arr) * sizeof(uint64_t));
}

static size_t code_cap(unsigned code)
{
    return (size_t)(4 + (code & 3)) << (code >> 2);
}

/* Moves a locked shard's live slots into a new array of code_cap(code) slots and
** publishes it. Returns the old array, which readers may still be probing
** (free it after a grace period, or at once with readers stopped), or
** UINT64_MAX when the allocation failed: the old array stays (a failed
** rebuild is benign, it only costs speed). */
static uint64_t shard_rebuild(atab_table *t, atab__shard *sh, unsigned code)
{
    size_t cap = code_cap(code);
    uint64_t *ns = atab__alloc(t, cap * sizeof *ns), old = sh->arr;
    if (!ns)
        return UINT64_MAX;
    if ((uint64_t)(uintptr_t)ns >> 56) {   /* cannot pack: treat as no memory */
        atab__free(t, ns, cap * sizeof *ns);
        atab__set_error(ATAB_ENOMEM);
        return UINT64_MAX;
    }
    memset(ns, 0, cap * sizeof *ns);
    uint64_t *os = atab__arr_slots(old);
    for (size_t i = 0; i < atab__arr_cap(old); i++) {
        uint64_t s = os[i];
        if (!atab__slot_live(s))
            continue;
        size_t j = atab__home(atom_hash(t, atab__slot_atom(s)), cap);
        while (ns[j] != 0)
            if (++j == cap)
                j = 0;
        ns[j] = s;   /* same tag: the hash did not change */
    }
    __atomic_store_n(&sh->arr, ((uint64_t)code << 56) | (uintptr_t)ns,
                     __ATOMIC_RELEASE);
    sh->tombs = 0;
    return old;
}

/* The smallest size class that holds `live` slots at the growth load. */
static unsigned code_for(size_t live)
{
    unsigned code = MIN_CODE;
    while (code_cap(code) * GROW_NUM < live * GROW_DEN)
        code++;
    return code;
}

/* Makes room for one more slot in a locked shard; *retired receives an old
** array to free after a grace period. A failed growth is benign while one
** empty slot would remain; then it is ATAB_ENOMEM. 0 when the insert may
** go ahead. */
static int shard_reserve(atab_table *t, atab__shard *sh, uint64_t *retired)
{
    size_t cap = atab__arr_cap(sh->arr), full = (size_t)sh->used + sh->tombs;
    if (full >= 0x7fffffff) {   /* 32-bit counters: 2^31 slots a shard at most */
        atab__set_error(ATAB_ENOMEM);
        return -1;
    }
    if ((full + 1) * LOAD_DEN <= cap * LOAD_NUM)
        return 0;
    uint64_t old = shard_rebuild(t, sh, code_for(sh->used + 1));
    if (old != UINT64_MAX) {
        *retired = old;
        return 0;
    }
    if (cap && full + 2 <= cap) {
        atab__set_error(ATAB_OK);   /* benign: keep the fuller array */
        return 0;
    }
    return -1;
}

/* Puts `s` into a locked shard at the insert position for key k. */
static int shard_insert(atab_table *t, atab__shard *sh, const atab__key *k,
                        uint64_t s, uint64_t *retired)
{
    size_t ins = 0;
    if (shard_reserve(t, sh, retired) != 0)
        return -1;
    probe(sh->arr, k, &ins);   /* the array may have changed */
    uint64_t *slots = atab__arr_slots(sh->arr);
    if (slots[ins] == ATAB__TOMB)
        sh->tombs--;
    __atomic_store_n(&slots[ins], s, __ATOMIC_RELEASE);
    sh->used++;
    return 0;
}

/* The locked path: a miss on the lock-free probe, or a thread without a
** record. Finds again under the shard lock, then a static atom (cached in
** the shard), then with `insert` a new atom. References taken here go to
** the atom's own count. */
static const atab_atom *locked_path(atab_table *t, const atab__key *k,
                                    const char *u8, int insert)
{
    atab__shard *sh = shard_of(t, k->hash);
    uint64_t retired = 0;
    const atab_atom *a;

    pthread_mutex_lock(&sh->lock);
    a = probe(sh->arr, k, NULL);
    if (a) {
        if (!atab_is_static(a))
            atab__count_add(a, 1);
    } else if ((a = atab__static_lookup(t, u8, k->len)) != NULL) {
        if (shard_insert(t, sh, k, slot_make(a, k->hash), &retired) == 0)
            sh->statics++;   /* cached: later hits are one probe */
        atab__set_error(ATAB_OK);   /* failing to cache is benign */
    } else if (insert) {
        atab_atom *na = atab__atom_new(t, k);
        if (na && shard_insert(t, sh, k, slot_make(na, k->hash), &retired) != 0) {
            atab__atom_free(t, na);
            na = NULL;
        }
        a = na;
    } else {
        atab__set_error(ATAB_OK);   /* absent is no error: clear a stale one */
    }
    pthread_mutex_unlock(&sh->lock);
    if (retired) {   /* readers may be on the old array: wait, then free */
        atab__synchronize(t);
        free_arr(t, retired);
    }
    return a;
}

/* Looks up, and with `insert` interns, a prepared key. A hit is a probe
** without locks and a reference in this thread's cache: no shared write. */
static inline __attribute__((always_inline)) const atab_atom *
find_or_insert(atab_table *t, const atab__key *k,
                                       const char *u8, int insert)
{
    atab__rec *r = atab__enter(t);
    if (ATAB__LIKELY(r != NULL)) {
        uint64_t arr = __atomic_load_n(&shard_of(t, k->hash)->arr, __ATOMIC_ACQUIRE);
        const atab_atom *a = probe_hit(arr, k);
        if (a) {
            if (!atab_is_static(a))
                atab__ref_cached(t, r, a);
            atab__leave(r);
            return a;
        }
        atab__leave(r);
        /* A lookup that missed needs no lock unless a static atom, not yet
        ** cached in the shard, could match (the sets are immutable, so
        ** asking them takes no lock either). A racing insert is ordered
        ** after this lookup. Before: 326 Ir per corpus miss, 22% of it in
        ** pthread_mutex_lock/unlock and the second probe (callgrind). */
        if (!insert && !atab__static_lookup(t, u8, k->len))
            return atab__fail(ATAB_OK);   /* absent is no error: clear a stale one */
    }
    return locked_path(t, k, u8, insert);
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

static inline __attribute__((always_inline)) const atab_atom *
intern_bytes(atab_table *t, const char *s, size_t len,
                                     int insert)
{
    atab__key k;
    if (check_bytes(t, s, len) != 0)
        return NULL;
    k.s = len ? s : "";
    k.u16 = NULL;
    k.n16 = 0;
    k.len = len;
    k.hash = atab__hash_inline(t->seed, k.s, len);   /* == atab__hash_bytes */
    return find_or_insert(t, &k, k.s, insert);
}

/* ---- the short-key hit path ----
** Keys of 1 to ATAB__SHORT_KEY bytes (most atoms) hit through a path with
** no call but tail calls, so it saves no registers and builds no key on the
** stack. A thread's first visit, a sweep in progress, a new cache entry and
** a miss leave it for the general path above. Before: 172.0 Ir per corpus
** hit, 16 of them saving and restoring six registers (callgrind). */

/* The general path for a hashed key (enter_slow, a new cache entry). */
static __attribute__((noinline)) const atab_atom *
short_general(atab_table *t, const char *s, size_t len, uint64_t h, int insert)
{
    atab__key k = {s, NULL, 0, len, h};
    return find_or_insert(t, &k, s, insert);
}

/* After a lock-free miss: as find_or_insert does from there. */
static __attribute__((noinline)) const atab_atom *
short_missed(atab_table *t, const char *s, size_t len, uint64_t h, int insert)
{
    if (!insert && !atab__static_lookup(t, s, len))
        return atab__fail(ATAB_OK);   /* absent is no error: clear a stale one */
    atab__key k = {s, NULL, 0, len, h};
    return locked_path(t, &k, s, insert);
}

static __attribute__((noinline)) const atab_atom *
short_ref(atab_table *t, atab__rec *r, const atab_atom *a)
{
    atab__rec_ref(t, r, a);
    atab__leave(r);
    return a;
}

/* probe_hit for a short UTF-8 key: no UTF-16 case, no memcmp. */
static inline __attribute__((always_inline)) const atab_atom *
probe_short(uint64_t arr, const char *s, size_t len, uint64_t h)
{
    uint64_t *slots = atab__arr_slots(arr);
    size_t cap = atab__arr_cap(arr), i = atab__home(h, cap);
    uint64_t tag = hash_tag(h);
    if (len > ATAB__SHORT_KEY)
        __builtin_unreachable();   /* lets the compiler drop eq_bytes' memcmp */
    if (ATAB__UNLIKELY(!arr))
        return NULL;
    for (;;) {
        uint64_t v = load_slot(&slots[i]);
        const atab_atom *a = atab__slot_atom(v);
        if ((v & 1) ? (v >> 48) == tag : v != 0 && v != ATAB__TOMB) {
            if (atab_len(a) == len && atab__eq_bytes(atab_chars(a), s, len))
                return a;
        } else if (v == 0) {
            return NULL;
        }
        if (++i == cap)
            i = 0;
    }
}

/* find_or_insert for a short key, s != NULL. */
static inline __attribute__((always_inline)) const atab_atom *
intern_short(atab_table *t, const char *s, size_t len, int insert)
{
    uint64_t h = atab__hash_short(t->seed, s, len);
    atab__rec *r = atab__enter_fast(t);
    if (ATAB__UNLIKELY(r == NULL))
        return short_general(t, s, len, h, insert);
    uint64_t arr = __atomic_load_n(&shard_of(t, h)->arr, __ATOMIC_ACQUIRE);
    const atab_atom *a = probe_short(arr, s, len, h);
    if (ATAB__UNLIKELY(a == NULL)) {
        atab__leave(r);
        if (!insert && len > t->static_maxlen)
            return atab__fail(ATAB_OK);   /* a lookup no static atom can answer */
        return short_missed(t, s, len, h, insert);
    }
    if (!atab_is_static(a)) {
        atab__ent *e = atab__rec_find(r, a);
        if (ATAB__UNLIKELY(!e || e->d >= ATAB__DELTA_MAX - 1))
            return short_ref(t, r, a);
        e->d++;
    }
    atab__leave(r);
    return a;
}

/* The two paths, out of line: the entry points below only choose, so a
** long key does not pay for the short path's register saves. */
static __attribute__((noinline)) const atab_atom *
intern_other(atab_table *t, const char *s, size_t len, int insert)
{
    return intern_bytes(t, s, len, insert);
}

static __attribute__((noinline)) const atab_atom *
intern_short_1(atab_table *t, const char *s, size_t len)
{
    return intern_short(t, s, len, 1);
}

static __attribute__((noinline)) const atab_atom *
lookup_short(atab_table *t, const char *s, size_t len)
{
    return intern_short(t, s, len, 0);
}

const atab_atom *atab_intern(atab_table *t, const char *s, size_t len)
{
    if (ATAB__LIKELY(t && s && len - 1 < ATAB__SHORT_KEY))   /* 1..16 bytes */
        return intern_short_1(t, s, len);
    return intern_other(t, s, len, 1);
}

const atab_atom *atab_lookup(atab_table *t, const char *s, size_t len)
{
    if (ATAB__LIKELY(t && s && len - 1 < ATAB__SHORT_KEY))
        return lookup_short(t, s, len);
    return intern_other(t, s, len, 0);
}

const atab_atom *atab_intern_cstr(atab_table *t, const char *s)
{
    if (!s)
        return atab__fail(ATAB_EINVAL);
    return intern_bytes(t, s, strlen(s), 1);
}

/* UTF-16: short text is converted on the stack and goes the UTF-8 way;
** longer text is hashed and compared chunk by chunk, never copied. */
static const atab_atom *intern_u16(atab_table *t, const uint16_t *s, size_t n,
                                   int insert)
{
    char buf[ATAB__U16_STACK];
    size_t len8 = 0;
    atab__key k;
    if (check_bytes(t, s, n) != 0)
        return NULL;
    int rc = atab__utf16_measure(s, n, &len8);
    if (rc != ATAB_OK)
        return atab__fail(rc);
    if (len8 <= sizeof buf) {
        atab__utf16_encode(buf, s, n);
        return intern_bytes(t, buf, len8, insert);
    }
    k.s = NULL;
    k.u16 = s;
    k.n16 = n;
    k.len = len8;
    k.hash = atab__hash_key_u16(t->seed, &k);
    return find_or_insert(t, &k, NULL, insert);   /* statics are shorter */
}

const atab_atom *atab_intern_utf16(atab_table *t, const uint16_t *s, size_t len)
{
    return intern_u16(t, s, len, 1);
}

const atab_atom *atab_lookup_utf16(atab_table *t, const uint16_t *s, size_t len)
{
    return intern_u16(t, s, len, 0);
}

/* ---- sweeping: only with readers stopped (see thread.c) ---- */

/* Frees one slot's atom if its count is zero; pins it if below (it was
** released more often than referenced: freeing could hurt a holder). */
static size_t sweep_slot(atab_table *t, atab__shard *sh, uint64_t *slot)
{
    atab_atom *a = (atab_atom *)atab__slot_atom(*slot);
    int32_t c;
    if (atab_is_static(a) || (c = atab__count(a)) > 0)
        return 0;
    if (c < 0) {
        atab__count_add(a, ATAB__REF_SAT);   /* saturates: never freed */
        t->misuse++;
        return 0;
    }
    atab__atom_free(t, a);
    __atomic_store_n(slot, ATAB__TOMB, __ATOMIC_RELAXED);
    sh->used--;
    sh->tombs++;
    return 1;
}

/* The slot holding atom `a` (hash h) in a locked shard, found by address;
** NULL when the shard does not hold it. */
static uint64_t *find_slot(atab__shard *sh, uint64_t h, const atab_atom *a)
{
    uint64_t *slots = atab__arr_slots(sh->arr);
    size_t cap = atab__arr_cap(sh->arr);
    for (size_t i = atab__home(h, cap); sh->arr && slots[i] != 0; i = i + 1 < cap ? i + 1 : 0)
        if (atab__slot_live(slots[i]) && atab__slot_atom(slots[i]) == a)
            return &slots[i];
    return NULL;
}

/* Sweeps one candidate: finds its slot by hash and address. */
static size_t sweep_candidate(atab_table *t, const atab_atom *a)
{
    uint64_t h = atom_hash(t, a);
    atab__shard *sh = shard_of(t, h);
    size_t freed = 0;
    pthread_mutex_lock(&sh->lock);
    uint64_t *slot = find_slot(sh, h, a);
    if (slot)
        freed = sweep_slot(t, sh, slot);
    pthread_mutex_unlock(&sh->lock);
    return freed;
}

static size_t sweep_all(atab_table *t)
{
    size_t freed = 0;
    for (unsigned i = 0; i < ATAB__SHARDS; i++) {
        atab__shard *sh = &t->shards[i];
        pthread_mutex_lock(&sh->lock);
        uint64_t *slots = atab__arr_slots(sh->arr);
        for (size_t j = 0; j < atab__arr_cap(sh->arr); j++)
            if (atab__slot_live(slots[j]))
                freed += sweep_slot(t, sh, &slots[j]);
        pthread_mutex_unlock(&sh->lock);
    }
    return freed;
}

/* Rebuilds shards that the sweep left sparse or full of tombstones; no
** reader is inside, so old arrays go at once. Failures are benign. */
static void compact(atab_table *t)
{
    for (unsigned i = 0; i < ATAB__SHARDS; i++) {
        atab__shard *sh = &t->shards[i];
        pthread_mutex_lock(&sh->lock);   /* before reading arr: inserts run */
        size_t cap = atab__arr_cap(sh->arr);
        if (sh->tombs > cap / 4 || (sh->tombs && code_cap(code_for(sh->used)) < cap / 2)) {
            uint64_t old = shard_rebuild(t, sh, code_for(sh->used));
            if (old != UINT64_MAX)
                free_arr(t, old);
            atab__set_error(ATAB_OK);
        }
        pthread_mutex_unlock(&sh->lock);
    }
}

static int cmp_ptr(const void *x, const void *y)
{
    uintptr_t a = (uintptr_t)*(const atab_atom *const *)x;
    uintptr_t b = (uintptr_t)*(const atab_atom *const *)y;
    return (a > b) - (a < b);
}

/* The sweep proper; readers are stopped and cand_lock is held. Frees from
** the candidates (sorted, duplicates dropped), or scans every slot when a
** candidate could not be recorded. */
static size_t sweep(atab_table *t)
{
    atab__vec c = {NULL, 0, 0};
    size_t freed = 0;
    atab__flush_deltas(t, &c);
    for (size_t i = 0; i < t->cands.n; i++)
        atab__vec_push(t, &c, t->cands.v[i]);
    t->cands.n = 0;
    if (__atomic_exchange_n(&t->full_scan, 0, __ATOMIC_RELAXED)) {
        freed = sweep_all(t);
    } else if (c.n) {
        qsort(c.v, c.n, sizeof *c.v, cmp_ptr);
        for (size_t i = 0; i < c.n; i++)
            if (i == 0 || c.v[i] != c.v[i - 1])
                freed += sweep_candidate(t, c.v[i]);
    }
    atab__vec_free(t, &c);
    if (freed)
        compact(t);
    __atomic_store_n(&t->unused, 0, __ATOMIC_RELAXED);
    return freed;
}

size_t atab_gc(atab_table *t)
{
    if (!t)
        return 0;
    atab__stop_readers(t);
    pthread_mutex_lock(&t->cand_lock);
    size_t freed = sweep(t);
    pthread_mutex_unlock(&t->cand_lock);
    atab__resume_readers(t);
    return freed;
}

/* The sweep a release triggers runs on the releasing thread; another
** thread crossing the threshold meanwhile does not wait for it. */
static void maybe_sweep(atab_table *t)
{
    if (__atomic_load_n(&t->unused, __ATOMIC_RELAXED) < t->sweep_threshold)
        return;
    if (__atomic_exchange_n(&t->self_sweep, 1, __ATOMIC_ACQUIRE))
        return;
    atab_gc(t);
    __atomic_store_n(&t->self_sweep, 0, __ATOMIC_RELEASE);
}

/* Release for a thread without a record: on the atom's own count, under
** cand_lock so a candidate it queues cannot be swept before it is queued. */
static int release_locked(atab_table *t, const atab_atom *a)
{
    int rc = ATAB_OK;
    pthread_mutex_lock(&t->cand_lock);
#ifdef ATAB_DEBUG
    if (atab__count(a) <= 0)   /* exact here: no thread caches counts */
        rc = ATAB_EREFS;
    else
#endif
    if (atab__count_add(a, -1) <= 0) {
        atab__vec_push(t, &t->cands, a);
        __atomic_add_fetch(&t->unused, 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&t->cand_lock);
    if (rc != ATAB_OK)
        atab__set_error(rc);
    return rc;
}

#ifdef ATAB_DEBUG
/* Debug builds: is `a` a dynamic atom of t? Looked up by its hash and its
** address under the shard lock, before anything touches its count, so a
** pointer that is not an atom (or another table's) is refused. `a` must
** still point to readable memory with a header. */
static int owns_atom(atab_table *t, const atab_atom *a)
{
    uint64_t h = atom_hash(t, a);
    atab__shard *sh = shard_of(t, h);
    pthread_mutex_lock(&sh->lock);
    int found = find_slot(sh, h, a) != NULL;
    pthread_mutex_unlock(&sh->lock);
    return found;
}
#endif

int atab_release(atab_table *t, const atab_atom *a)
{
    int rc = ATAB_OK;
    if (!t || !a) {
        atab__set_error(ATAB_EINVAL);
        return ATAB_EINVAL;
    }
    if (atab_is_static(a))
        return ATAB_OK;
#ifdef ATAB_DEBUG
    if (!owns_atom(t, a)) {   /* not an atom of this table: touch nothing */
        atab__set_error(ATAB_EINVAL);
        return ATAB_EINVAL;
    }
#endif
    atab__rec *r = atab__enter(t);
    if (ATAB__LIKELY(r != NULL)) {
        atab__release_cached(t, r, a);
        atab__leave(r);
    } else {
        rc = release_locked(t, a);
    }
    maybe_sweep(t);
    return rc;
}

void atab__table_visit_shards(atab_table *t, atab__array_fn array_fn,
                              atab__visit_fn fn, void *ud)
{
    for (unsigned i = 0; i < ATAB__SHARDS; i++) {
        atab__shard *sh = &t->shards[i];
        pthread_mutex_lock(&sh->lock);   /* this shard only, never all */
        uint64_t *slots = atab__arr_slots(sh->arr);
        if (sh->arr && array_fn)
            array_fn(ud, slots, atab__arr_cap(sh->arr) * sizeof *slots);
        for (size_t j = 0; j < atab__arr_cap(sh->arr); j++)
            if (atab__slot_live(slots[j]))
                fn(ud, atab__slot_atom(slots[j]));
        pthread_mutex_unlock(&sh->lock);
    }
}

void atab__table_visit(atab_table *t, atab__visit_fn fn, void *ud)
{
    atab__table_visit_shards(t, NULL, fn, ud);
}

/* Moves every thread's cached deltas into the atoms' own counts, so each
** count is exact; the pause is proportional to the threads, not the table. */
void atab__flush_counts(atab_table *t)
{
    atab__stop_readers(t);
    pthread_mutex_lock(&t->cand_lock);
    atab__flush_deltas(t, &t->cands);
    pthread_mutex_unlock(&t->cand_lock);
    atab__resume_readers(t);
}

int atab_get_stats(atab_table *t, atab_stats *out)
{
    if (!t || !out) {
        atab__set_error(ATAB_EINVAL);
        return ATAB_EINVAL;
    }
    memset(out, 0, sizeof *out);
    atab__flush_counts(t);
    for (unsigned i = 0; i < ATAB__SHARDS; i++) {
        atab__shard *sh = &t->shards[i];
        pthread_mutex_lock(&sh->lock);
        uint64_t *slots = atab__arr_slots(sh->arr);
        for (size_t j = 0; j < atab__arr_cap(sh->arr); j++) {
            uint64_t s = slots[j];
            if (!atab__slot_live(s) || atab_is_static(atab__slot_atom(s)))
                continue;
            out->atoms++;
            out->unused += atab__count(atab__slot_atom(s)) == 0;
        }
        out->statics_seen += sh->statics;
        out->capacity += atab__arr_cap(sh->arr);
        pthread_mutex_unlock(&sh->lock);
    }
    out->bytes = __atomic_load_n(&t->bytes, __ATOMIC_RELAXED);
    out->misuse = t->misuse;
    return ATAB_OK;
}

size_t atab_count(atab_table *t)
{
    size_t n = 0;
    if (!t)
        return 0;
    for (unsigned i = 0; i < ATAB__SHARDS; i++) {
        atab__shard *sh = &t->shards[i];
        pthread_mutex_lock(&sh->lock);
        n += sh->used - sh->statics;
        pthread_mutex_unlock(&sh->lock);
    }
    return n;
}

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
    t->sweep_threshold = o->sweep_threshold ? o->sweep_threshold : 10000;
    t->memory_limit = o->memory_limit;
    for (unsigned i = 0; i < ATAB__SHARDS; i++)
        pthread_mutex_init(&t->shards[i].lock, NULL);
    pthread_mutex_init(&t->cand_lock, NULL);
    atab__threads_init(t);
    if (atab__static_init(t, o) != 0)
        return -1;
    if (o->initial_capacity) {
        size_t per = o->initial_capacity / ATAB__SHARDS + 1;
        for (unsigned i = 0; i < ATAB__SHARDS; i++)
            shard_rebuild(t, &t->shards[i], code_for(per));   /* benign; no old */
        atab__set_error(ATAB_OK);
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
        atab__table_destroy(t);
        return atab__fail(err);
    }
    return t;
}

void atab__table_destroy(atab_table *t)
{
    for (unsigned i = 0; i < ATAB__SHARDS; i++) {
        atab__shard *sh = &t->shards[i];
        uint64_t *slots = atab__arr_slots(sh->arr);
        for (size_t j = 0; j < atab__arr_cap(sh->arr); j++) {
            uint64_t s = slots[j];
            if (atab__slot_live(s) && !atab_is_static(atab__slot_atom(s)))
                atab__atom_free(t, (atab_atom *)atab__slot_atom(s));
        }
        free_arr(t, sh->arr);
        pthread_mutex_destroy(&sh->lock);
    }
    atab__threads_fini(t);
    atab__vec_free(t, &t->cands);
    pthread_mutex_destroy(&t->cand_lock);
    atab__static_fini(t);
    atab_allocator al = t->alloc;
    al.free(al.ud, t->raw, ATAB__TABLE_ALLOC);
}

void atab_table_free(atab_table *t)
{
    if (!t)
        return;
    if (atab__external_close(t))   /* handles out: the last release frees */
        return;
    atab__table_destroy(t);
}
