/* SPDX-License-Identifier: MIT */
/*
** external.c - host caches of one host string per atom, for hosts whose
** strings share atoms' characters through external handles (the handles
** themselves, and the table's deferred free that they allow, are part of
** the table's life in life.c).
**
** A host cache (one per host heap, any number per table) is a side table
** keyed by atom address, so an atom never shared costs it nothing; see
** atomtab.h for its policy and the numbers below (CACHE_LOAD_NUM) for its
** load. The table keeps its caches in a list (t->host_cache) for the
** reporter, for trims (an atom two caches hold is unused when only caches
** hold it) and for atab_table_free, which frees the caches left on it.
*/
#include "atab_int.h"

/* ---- host caches ---- */

/* An entry: the atom's address and the host's string. The array of `cap`
** entries is followed, in the same block, by `cap` bytes: the references
** on the atom each entry's string holds (bit 0: 0 or 1), and DOOMED while
** a trim is dropping the entry. Read only by trims. */
typedef struct cent {
    uintptr_t key;
    void *s;
} cent;

#define EMPTY ((uintptr_t)1)   /* atoms are 4-aligned: no atom lives at 1 */
#define TOMB ((uintptr_t)2)    /* ... nor at 2 */
#define STRING_REF 1u          /* the refs byte: the string holds a handle */
#define DOOMED 0x80u           /* ... and a trim found no other holder */
#define MIN_CAP 16
#define TRIM_MIN 1024
/* Maximum load (live + deleted): 1/2. Measured with callgrind, hits on
** random atoms among n cached (200,000 reads, no hold callback):
**   load 1/2: 37.9 / 38.1 / 36.0 / 36.0 instructions a hit, n = 100 / 1000 /
**             5000 / 10000; 3/4: 37.8 / 38.2 / 39.9 / 39.0; 7/8: 50.1 /
**             37.8 / 39.7 / 39.4 (7/8 costs most just under a doubling).
** 3/4 would save a third of the slots (23-45 bytes a cached atom instead of
** 34-68) for up to 10% more per hit; the cache holds only atoms a host
** shares, each already costing the host a string object and a handle, and
** reads are what it is for, so 1/2. */
#ifndef CACHE_LOAD_NUM
#define CACHE_LOAD_NUM 1
#endif
#ifndef CACHE_LOAD_DEN
#define CACHE_LOAD_DEN 2
#endif

/* One host heap's cache. Its own thread reads its entries without a lock
** and is the only one to change them, always under `lock`; other threads
** take `lock` to read them (the reporter the array's size, the other
** caches' trims the entries). */
struct atab_host_cache {
    atab_table *t;
    atab_host_ops ops;
    pthread_mutex_t lock;
    cent *e;            /* `none` until the first miss */
    size_t mask;        /* cap - 1, or 0 */
    size_t cap;         /* power of two, or 0 */
    size_t n, tombs;    /* live entries; deleted ones */
    size_t trim_at;     /* a miss at this many entries trims first */
    atab_host_cache *next;   /* the table's list, under hcache.lock */
};

/* The table's caches (t->host_cache): made with its first cache, freed by
** atab_table_free. `lock` guards the list. A thread holding it may take
** caches' locks, in list order; none takes it while holding a cache's. */
typedef struct hcache {
    pthread_mutex_t lock;
    atab_host_cache *head;
} hcache;

/* An empty cache's array: one empty slot, so a lookup needs no NULL test
** (it is never written: a miss grows the cache first). */
static const cent none[1] = {{EMPTY, NULL}};

static inline int live(uintptr_t k)
{
    return k != EMPTY && k != TOMB;
}

static inline unsigned char *refs_of(cent *e, size_t cap)
{
    return (unsigned char *)(e + cap);
}

static inline size_t block_size(size_t cap)
{
    return cap * (sizeof(cent) + 1);
}

static inline void *hold(atab_host_cache *c, void *s)
{
    return c->ops.hold ? c->ops.hold(c->ops.ud, s) : s;
}

/* The table's list of caches, made on first use; NULL (error set) when it
** cannot be allocated. Of two threads making it at once, one list wins. */
static hcache *caches_of(atab_table *t)
{
    void *cur = __atomic_load_n(&t->host_cache, __ATOMIC_ACQUIRE);
    if (cur)
        return cur;
    hcache *mine = atab__alloc_or_purge(t, sizeof *mine);
    if (!mine)
        return NULL;
    pthread_mutex_init(&mine->lock, NULL);
    mine->head = NULL;
    if (__atomic_compare_exchange_n(&t->host_cache, &cur, (void *)mine, 0,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return mine;
    pthread_mutex_destroy(&mine->lock);   /* lost: cur is the winner's */
    atab__free(t, mine, sizeof *mine);
    return cur;
}

atab_host_cache *atab_host_cache_new(atab_table *t, const atab_host_ops *ops)
{
    if (!t || !ops || !ops->create || !ops->drop)
        return atab__fail(ATAB_EINVAL);
    hcache *l = caches_of(t);
    atab_host_cache *c = l ? atab__alloc_or_purge(t, sizeof *c) : NULL;
    if (!c)
        return NULL;
    memset(c, 0, sizeof *c);
    c->t = t;
    c->ops = *ops;
    pthread_mutex_init(&c->lock, NULL);
    c->e = (cent *)none;
    c->trim_at = TRIM_MIN;
    pthread_mutex_lock(&l->lock);
    c->next = l->head;
    l->head = c;
    pthread_mutex_unlock(&l->lock);
    return c;
}

/* Puts an entry into an array known to have an empty slot, in the first
** slot of its probe not live. Returns 1 when that slot was a deleted one. */
static int put(cent *e, size_t cap, uintptr_t key, void *s, unsigned char refs)
{
    size_t i = atab_hash((const atab_atom *)key) & (cap - 1);
    while (live(e[i].key))
        i = (i + 1) & (cap - 1);
    int tomb = e[i].key == TOMB;
    e[i].key = key;
    e[i].s = s;
    refs_of(e, cap)[i] = refs;
    return tomb;
}

/* Installs a new array (`none` with cap 0) and frees the old one; the
** swap is under the lock, so no other thread reads a freed block. */
static void swap_array(atab_host_cache *c, cent *ne, size_t cap)
{
    cent *old = c->e;
    size_t old_cap = c->cap;
    pthread_mutex_lock(&c->lock);
    c->e = ne;
    c->cap = cap;
    c->mask = cap ? cap - 1 : 0;
    pthread_mutex_unlock(&c->lock);
    c->tombs = 0;
    if (old_cap)
        atab__free(c->t, old, block_size(old_cap));
}

/* Moves the live entries into a new array of `cap` slots. -1 (error set)
** when it cannot be allocated: the old array stays. */
static int rebuild(atab_host_cache *c, size_t cap)
{
    cent *ne = atab__alloc_or_purge(c->t, block_size(cap));
    if (!ne)
        return -1;
    for (size_t i = 0; i < cap; i++)
        ne[i].key = EMPTY, ne[i].s = NULL;
    for (size_t i = 0; i < c->cap; i++)
        if (live(c->e[i].key))
            put(ne, cap, c->e[i].key, c->e[i].s, refs_of(c->e, c->cap)[i]);
    swap_array(c, ne, cap);
    return 0;
}

static size_t cap_for(size_t n)
{
    size_t cap = MIN_CAP;
    while (cap * CACHE_LOAD_NUM < n * CACHE_LOAD_DEN)
        cap *= 2;
    return cap;
}

/* Room for one more entry at load <= 1/2 (live + deleted). A failed growth
** is benign while the array keeps an empty slot after the insert (probes
** must end); else -1 with the allocation's error (ATAB_ENOMEM or
** ATAB_ELIMIT), nothing changed. */
static int reserve(atab_host_cache *c)
{
    size_t full = c->n + c->tombs + 1;
    atab_status saved = atab_last_error();
    if (full * CACHE_LOAD_DEN <= c->cap * CACHE_LOAD_NUM)
        return 0;
    if (rebuild(c, cap_for(c->n + 1)) == 0)
        return 0;
    if (full < c->cap) {
        atab__set_error(saved);   /* benign: the fuller array will do */
        return 0;
    }
    return -1;
}

/* Removes entry i, then drops the cache's reference and its hold. */
static void drop_entry(atab_host_cache *c, size_t i)
{
    const atab_atom *a = (const atab_atom *)c->e[i].key;
    void *s = c->e[i].s;
    pthread_mutex_lock(&c->lock);
    c->e[i].key = TOMB;
    c->e[i].s = NULL;
    refs_of(c->e, c->cap)[i] = 0;
    pthread_mutex_unlock(&c->lock);
    c->n--;
    c->tombs++;
    if (!atab_is_static(a))
        atab_release(c->t, a);
    c->ops.drop(c->ops.ud, s);
}

/* The miss: trims when due, makes room (so a failure loses nothing), asks
** the host for a string, takes the cache's reference, inserts. */
static __attribute__((noinline)) void *miss(atab_host_cache *c, const atab_atom *a)
{
    unsigned refs = 0;
    if (!a || (!atab_is_static(a) && !atab__atom_of(c->t, a)))
        return atab__fail(ATAB_EINVAL);   /* another table's: its release here is refused */
    if (c->n >= c->trim_at)
        atab_host_cache_trim(c);
    if (reserve(c) != 0)
        return NULL;
    void *s = c->ops.create(c->ops.ud, c->t, a, &refs);
    if (!s)
        return atab__fail(ATAB_ENOMEM);
    if (!atab_is_static(a))
        atab_ref(a);   /* the cache's own reference */
    pthread_mutex_lock(&c->lock);
    int tomb = put(c->e, c->cap, (uintptr_t)a, s, refs ? STRING_REF : 0);
    pthread_mutex_unlock(&c->lock);
    c->n++;
    c->tombs -= (size_t)tomb;
    return hold(c, s);
}

/* The hit path: no NULL test on the array (see `none`) nor on `a` (NULL
** matches no key, so it ends at an empty slot and the miss rejects it). */
void *atab_host_cache_get(atab_host_cache *c, const atab_atom *a)
{
    if (!c)
        return atab__fail(ATAB_EINVAL);
    for (size_t i = atab_hash(a) & c->mask;; i = (i + 1) & c->mask) {
        uintptr_t k = c->e[i].key;
        if (k == (uintptr_t)a)
            return hold(c, c->e[i].s);
        if (k == EMPTY)
            return miss(c, a);
    }
}

/* The references c's entry for `a` holds (the cache's own and its string's
** handle), 0 without one. On c's thread, or under c->lock. */
static uint32_t holds(atab_host_cache *c, const atab_atom *a)
{
    for (size_t i = atab_hash(a) & c->mask;; i = (i + 1) & c->mask) {
        uintptr_t k = c->e[i].key;
        if (k == (uintptr_t)a)
            return 1 + (uint32_t)(refs_of(c->e, c->cap)[i] & STRING_REF);
        if (k == EMPTY)
            return 0;
    }
}

static void lock_caches(hcache *l, int lock)
{
    for (atab_host_cache *o = l->head; o; o = o->next)
        (lock ? pthread_mutex_lock : pthread_mutex_unlock)(&o->lock);
}

/* Marks DOOMED c's entries whose atom has no references but caches' (its
** own and any other cache's: an atom two heaps share is held by both, and
** each cache must be able to let go of it). Under the list's lock and
** every cache's. Returns how many it marked. */
static size_t mark_unused(hcache *l, atab_host_cache *c)
{
    unsigned char *refs = refs_of(c->e, c->cap);
    size_t marked = 0;
    for (size_t i = 0; i < c->cap; i++) {
        const atab_atom *a = (const atab_atom *)c->e[i].key;
        if (!live(c->e[i].key) || atab_is_static(a))
            continue;
        uint32_t count = atab__count(a), held = 1 + (uint32_t)(refs[i] & STRING_REF);
        for (atab_host_cache *o = l->head; o && count > held; o = o->next)
            if (o != c)
                held += holds(o, a);
        if (count <= held) {
            refs[i] |= DOOMED;
            marked++;
        }
    }
    return marked;
}

/* Rebuilds an array that trimming left full of tombstones; benign. */
static void compact(atab_host_cache *c)
{
    atab_status saved = atab_last_error();
    if (c->tombs > c->cap / 4 && rebuild(c, cap_for(c->n)) != 0)
        atab__set_error(saved);
}

/* Decides under the locks, drops after them: ops.drop and atab_release run
** with no lock of the cache held. */
size_t atab_host_cache_trim(atab_host_cache *c)
{
    size_t marked, dropped = 0;
    if (!c || !c->cap)
        return 0;
    hcache *l = c->t->host_cache;   /* c is on it */
    atab__flush_counts(c->t, 0, NULL, NULL);   /* counts exact; hits later only raise them */
    pthread_mutex_lock(&l->lock);
    lock_caches(l, 1);
    marked = mark_unused(l, c);
    lock_caches(l, 0);
    pthread_mutex_unlock(&l->lock);
    for (size_t i = 0; i < c->cap && dropped < marked; i++) {
        if (live(c->e[i].key) && (refs_of(c->e, c->cap)[i] & DOOMED)) {
            drop_entry(c, i);
            dropped++;
        }
    }
    compact(c);
    c->trim_at = c->n * 2 > TRIM_MIN ? c->n * 2 : TRIM_MIN;   /* next: at 2x kept */
    return dropped;
}

size_t atab_host_cache_clear(atab_host_cache *c)
{
    size_t dropped = 0;
    if (!c || !c->cap)
        return 0;
    for (size_t i = 0; i < c->cap; i++) {
        if (live(c->e[i].key)) {
            drop_entry(c, i);
            dropped++;
        }
    }
    swap_array(c, (cent *)none, 0);
    return dropped;
}

size_t atab_host_cache_count(const atab_host_cache *c)
{
    return c ? c->n : 0;
}

/* Drops every entry and frees c, which is off the list already. */
static size_t destroy(atab_host_cache *c)
{
    size_t dropped = atab_host_cache_clear(c);
    pthread_mutex_destroy(&c->lock);
    atab__free(c->t, c, sizeof *c);
    return dropped;
}

void atab_host_cache_free(atab_host_cache *c)
{
    if (!c)
        return;
    hcache *l = c->t->host_cache;
    pthread_mutex_lock(&l->lock);
    atab_host_cache **p = &l->head;
    while (*p != c)
        p = &(*p)->next;
    *p = c->next;
    pthread_mutex_unlock(&l->lock);
    destroy(c);
}

/* For the memory reporter: the list's, every cache's header and array,
** from any thread (host_cache is set once, and cleared only by
** atab_table_free). */
void atab__external_visit_memory(atab_table *t, atab__array_fn fn, void *ud)
{
    hcache *l = __atomic_load_n(&t->host_cache, __ATOMIC_ACQUIRE);
    if (!l)
        return;
    fn(ud, l, sizeof *l);
    pthread_mutex_lock(&l->lock);
    for (atab_host_cache *c = l->head; c; c = c->next) {
        fn(ud, c, sizeof *c);
        pthread_mutex_lock(&c->lock);
        if (c->cap)
            fn(ud, c->e, block_size(c->cap));
        pthread_mutex_unlock(&c->lock);
    }
    pthread_mutex_unlock(&l->lock);
}

/* ---- closing the table ---- */

/* atab_table_free's first step: frees every cache the host left on t, and
** the list, dropping their strings (whose handles may be the table's
** last). Nothing else runs on t now. */
void atab__host_cache_destroy(atab_table *t)
{
    hcache *l = t->host_cache;
    if (!l)
        return;
    while (l->head) {
        atab_host_cache *c = l->head;
        l->head = c->next;
        destroy(c);
    }
    t->host_cache = NULL;
    pthread_mutex_destroy(&l->lock);
    atab__free(t, l, sizeof *l);
}
