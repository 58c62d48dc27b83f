/*
** external.c - the host cache of one host string per atom, for hosts whose
** strings share atoms' characters through external handles (the handles
** themselves, and the table's deferred free, are part of the table's life
** in table.c).
**
** The host cache is a side table keyed by atom address, so an atom never
** shared costs it nothing; see atomtab.h for its policy and the numbers
** below (CACHE_LOAD_NUM) for its load.
*/
#include "atab_int.h"

/* ---- the host cache ---- */

/* An entry: the atom's address and the host's string. The array of `cap`
** entries is followed, in the same block, by `cap` bytes: the references
** on the atom each entry's string holds (0 or 1; read only by trims). */
typedef struct cent {
    uintptr_t key;
    void *s;
} cent;

#define EMPTY ((uintptr_t)1)   /* atoms are 4-aligned: no atom lives at 1 */
#define TOMB ((uintptr_t)2)    /* ... nor at 2 */
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

typedef struct hcache {
    atab_host_ops ops;
    pthread_mutex_t lock;   /* e and cap, against the reporter's thread */
    cent *e;            /* `none` until the first miss */
    size_t mask;        /* cap - 1, or 0 */
    size_t cap;         /* power of two, or 0 */
    size_t n, tombs;    /* live entries; deleted ones */
    size_t trim_at;     /* a miss at this many entries trims first */
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

static inline void *hold(hcache *c, void *s)
{
    return c->ops.hold ? c->ops.hold(c->ops.ud, s) : s;
}

int atab_external_cache_init(atab_table *t, const atab_host_ops *ops)
{
    if (!t || !ops || !ops->create || !ops->drop || t->host_cache) {
        atab__set_error(ATAB_EINVAL);
        return ATAB_EINVAL;
    }
    hcache *c = atab__alloc(t, sizeof *c);
    if (!c)
        return atab_last_error();
    memset(c, 0, sizeof *c);
    c->ops = *ops;
    pthread_mutex_init(&c->lock, NULL);
    c->e = (cent *)none;
    c->trim_at = TRIM_MIN;
    __atomic_store_n(&t->host_cache, c, __ATOMIC_RELEASE);   /* the reporter reads it */
    return ATAB_OK;
}

/* Puts an entry into an array known to have an empty slot. */
static void put(cent *e, size_t cap, uintptr_t key, void *s, unsigned char refs)
{
    size_t i = atab_hash((const atab_atom *)key) & (cap - 1);
    while (live(e[i].key))
        i = (i + 1) & (cap - 1);
    e[i].key = key;
    e[i].s = s;
    refs_of(e, cap)[i] = refs;
}

/* Installs a new array (`none` with cap 0) and frees the old one; the
** swap is under the lock, so a report never measures a freed block. */
static void swap_array(atab_table *t, hcache *c, cent *ne, size_t cap)
{
    cent *old = c->e;
    size_t old_cap = c->cap;
    pthread_mutex_lock(&c->lock);
    c->e = ne;
    c->cap = cap;
    pthread_mutex_unlock(&c->lock);
    c->mask = cap ? cap - 1 : 0;
    c->tombs = 0;
    if (old_cap)
        atab__free(t, old, block_size(old_cap));
}

/* Moves the live entries into a new array of `cap` slots. -1 (error set)
** when it cannot be allocated: the old array stays. */
static int rebuild(atab_table *t, hcache *c, size_t cap)
{
    cent *ne = atab__alloc(t, block_size(cap));
    if (!ne)
        return -1;
    for (size_t i = 0; i < cap; i++)
        ne[i].key = EMPTY, ne[i].s = NULL;
    for (size_t i = 0; i < c->cap; i++)
        if (live(c->e[i].key))
            put(ne, cap, c->e[i].key, c->e[i].s, refs_of(c->e, c->cap)[i]);
    swap_array(t, c, ne, cap);
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
** must end); else ATAB_ENOMEM with nothing changed. */
static int reserve(atab_table *t, hcache *c)
{
    size_t full = c->n + c->tombs + 1;
    if (full * CACHE_LOAD_DEN <= c->cap * CACHE_LOAD_NUM)
        return 0;
    if (rebuild(t, c, cap_for(c->n + 1)) == 0)
        return 0;
    if (full < c->cap) {
        atab__set_error(ATAB_OK);
        return 0;
    }
    return -1;
}

/* Removes entry i, then drops the cache's reference and its hold. */
static void drop_entry(atab_table *t, hcache *c, size_t i)
{
    const atab_atom *a = (const atab_atom *)c->e[i].key;
    void *s = c->e[i].s;
    c->e[i].key = TOMB;
    c->e[i].s = NULL;
    c->n--;
    c->tombs++;
    if (!atab_is_static(a))
        atab_release(t, a);
    c->ops.drop(c->ops.ud, s);
}

/* The miss: trims when due, makes room (so a failure loses nothing), asks
** the host for a string, takes the cache's reference, inserts. */
static __attribute__((noinline)) void *miss(atab_table *t, hcache *c,
                                            const atab_atom *a)
{
    unsigned refs = 0;
    if (!a)
        return atab__fail(ATAB_EINVAL);
    if (c->n >= c->trim_at)
        atab_external_cache_trim(t);
    if (reserve(t, c) != 0)
        return NULL;
    void *s = c->ops.create(c->ops.ud, t, a, &refs);
    if (!s)
        return atab__fail(ATAB_ENOMEM);
    if (!atab_is_static(a))
        atab_ref(a);   /* the cache's own reference */
    put(c->e, c->cap, (uintptr_t)a, s, refs != 0);
    c->n++;
    return hold(c, s);
}

/* The hit path: no NULL test on the array (see `none`) nor on `a` (NULL
** matches no key, so it ends at an empty slot and the miss rejects it). */
void *atab_external_cache_get(atab_table *t, const atab_atom *a)
{
    hcache *c;
    if (!t || !(c = t->host_cache))
        return atab__fail(ATAB_EINVAL);
    for (size_t i = atab_hash(a) & c->mask;; i = (i + 1) & c->mask) {
        uintptr_t k = c->e[i].key;
        if (k == (uintptr_t)a)
            return hold(c, c->e[i].s);
        if (k == EMPTY)
            return miss(t, c, a);
    }
}

/* Rebuilds an array that trimming left full of tombstones; benign. */
static void compact(atab_table *t, hcache *c)
{
    if (c->tombs > c->cap / 4 && rebuild(t, c, cap_for(c->n)) != 0)
        atab__set_error(ATAB_OK);
}

size_t atab_external_cache_trim(atab_table *t)
{
    hcache *c = t ? t->host_cache : NULL;
    size_t dropped = 0;
    if (!c || !c->cap)
        return 0;
    atab__flush_counts(t);   /* counts exact; hits later only raise them */
    for (size_t i = 0; i < c->cap; i++) {
        const atab_atom *a = (const atab_atom *)c->e[i].key;
        if (!live(c->e[i].key) || atab_is_static(a))
            continue;
        /* the cache's own reference, plus the string's handle if any */
        if (atab__count(a) <= 1 + (uint32_t)refs_of(c->e, c->cap)[i]) {
            drop_entry(t, c, i);
            dropped++;
        }
    }
    compact(t, c);
    c->trim_at = c->n * 2 > TRIM_MIN ? c->n * 2 : TRIM_MIN;   /* next: at 2x kept */
    return dropped;
}

size_t atab_external_cache_clear(atab_table *t)
{
    hcache *c = t ? t->host_cache : NULL;
    size_t dropped = 0;
    if (!c || !c->cap)
        return 0;
    for (size_t i = 0; i < c->cap; i++) {
        if (live(c->e[i].key)) {
            drop_entry(t, c, i);
            dropped++;
        }
    }
    swap_array(t, c, (cent *)none, 0);
    return dropped;
}

size_t atab_external_cache_count(const atab_table *t)
{
    const hcache *c = t ? t->host_cache : NULL;
    return c ? c->n : 0;
}

/* For the memory reporter: the cache's header and array, from any thread
** (host_cache is set once, and cleared only by atab_table_free). */
void atab__external_visit_memory(atab_table *t, atab__array_fn fn, void *ud)
{
    hcache *c = __atomic_load_n(&t->host_cache, __ATOMIC_ACQUIRE);
    if (!c)
        return;
    fn(ud, c, sizeof *c);
    pthread_mutex_lock(&c->lock);
    if (c->cap)
        fn(ud, c->e, block_size(c->cap));
    pthread_mutex_unlock(&c->lock);
}

/* ---- closing the table ---- */

void atab__host_cache_destroy(atab_table *t)
{
    hcache *c = t->host_cache;
    if (!c)
        return;
    atab_external_cache_clear(t);
    t->host_cache = NULL;
    pthread_mutex_destroy(&c->lock);
    atab__free(t, c, sizeof *c);
}
