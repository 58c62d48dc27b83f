/*
** table.c - the atom table: sharded open addressing, interning, lookup,
** deferred sweeping, statistics.
**
** The 64-bit seeded XXH3 hash of a string picks everything: its top
** ATAB__SHARD_BITS bits the shard, the next 16 bits a tag kept in the slot,
** the low bits the home slot in the shard's power-of-two array. Linear
** probing; deletions (sweeps only) leave tombstones, cleared when the array
** is rebuilt. A slot holds the atom pointer with the tag in its top 16 bits,
** so a probe rejects all but 1 in 65536 non-matching atoms without touching
** them, and a slot costs 8 bytes.
*/
#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

#include "atab_int.h"

#define TOMB ((uint64_t)2)   /* a deleted slot; 0 is an empty one */

/* Maximum load (live + tombstones) before the array is rebuilt: 3/4.
** Measured on the bundled corpus (see README): 7/8 saved table bytes
** but doubled probe lengths on misses. */
#define LOAD_NUM 3
#define LOAD_DEN 4
#define MIN_CAPACITY 8

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

static inline const atab_atom *slot_atom(uint64_t s)
{
    if (s & 1)
        s &= UINT64_C(0x0000fffffffffffe);
    return (const atab_atom *)(uintptr_t)s;
}

static inline int slot_may_match(uint64_t s, uint64_t h)
{
    return !(s & 1) || (s >> 48) == hash_tag(h);
}

static inline int slot_live(uint64_t s)
{
    return s != 0 && s != TOMB;
}

static inline atab__shard *shard_of(atab_table *t, uint64_t h)
{
    return &t->shards[h >> (64 - ATAB__SHARD_BITS)];
}

static uint64_t atom_hash(const atab_table *t, const atab_atom *a)
{
    return atab__hash_bytes(t->seed, atab_chars(a), atab_len(a));
}

/* Finds the key in a locked shard. On a miss, *ins is where it would go
** (the first tombstone or the empty slot that ended the probe). */
static const atab_atom *shard_find(const atab__shard *sh, const atab__key *k,
                                   size_t *ins)
{
    size_t i = (size_t)k->hash & sh->mask, first_tomb = SIZE_MAX;
    if (!sh->slots)
        return NULL;
    for (;;) {
        uint64_t s = sh->slots[i];
        if (s == 0)
            break;
        if (s == TOMB) {
            if (first_tomb == SIZE_MAX)
                first_tomb = i;
        } else if (slot_may_match(s, k->hash)) {
            const atab_atom *a = slot_atom(s);
            if (atab__key_equals(k, a))
                return a;
        }
        i = (i + 1) & sh->mask;
    }
    *ins = first_tomb != SIZE_MAX ? first_tomb : i;
    return NULL;
}

/* Moves a locked shard's live slots into a new array of `cap` slots.
** Returns 0, or -1 when the allocation failed (the old array stays:
** a failed rebuild is benign, it only costs speed). */
static int shard_rebuild(atab_table *t, atab__shard *sh, size_t cap)
{
    uint64_t *ns = atab__alloc(t, cap * sizeof *ns);
    if (!ns)
        return -1;
    memset(ns, 0, cap * sizeof *ns);
    for (size_t i = 0; sh->slots && i <= sh->mask; i++) {
        uint64_t s = sh->slots[i];
        if (!slot_live(s))
            continue;
        size_t j = (size_t)atom_hash(t, slot_atom(s)) & (cap - 1);
        while (ns[j] != 0)
            j = (j + 1) & (cap - 1);
        ns[j] = s;   /* same tag: the hash did not change */
    }
    if (sh->slots)
        atab__free(t, sh->slots, (sh->mask + 1) * sizeof *sh->slots);
    sh->slots = ns;
    sh->mask = cap - 1;
    sh->tombs = 0;
    return 0;
}

static size_t capacity_for(size_t live)
{
    size_t cap = MIN_CAPACITY;
    while (cap * LOAD_NUM / LOAD_DEN < live + 1)
        cap *= 2;
    return cap;
}

/* Makes room for one more slot in a locked shard. A failed growth is
** benign while one empty slot would remain; then it is ATAB_ENOMEM.
** Returns 0 when the insert may go ahead. */
static int shard_reserve(atab_table *t, atab__shard *sh)
{
    size_t cap = sh->slots ? sh->mask + 1 : 0;
    if ((sh->used + sh->tombs + 1) * LOAD_DEN <= cap * LOAD_NUM)
        return 0;
    if (shard_rebuild(t, sh, capacity_for(sh->used + 1)) == 0)
        return 0;
    if (cap && sh->used + sh->tombs + 2 <= cap) {
        atab__set_error(ATAB_OK);   /* benign: keep the fuller array */
        return 0;
    }
    return -1;
}

/* Puts `s` into a locked shard at the insert position for key k. */
static int shard_insert(atab_table *t, atab__shard *sh, const atab__key *k,
                        uint64_t s)
{
    size_t ins = 0;
    if (shard_reserve(t, sh) != 0)
        return -1;
    shard_find(sh, k, &ins);   /* the array may have changed */
    if (sh->slots[ins] == TOMB)
        sh->tombs--;
    sh->slots[ins] = s;
    sh->used++;
    return 0;
}

/* Takes a reference on a found atom (a revived one leaves the unused set). */
static void take_ref(atab_table *t, const atab_atom *a)
{
    if (atab_is_static(a))
        return;
    if (atab__incref(a) == 0)
        __atomic_sub_fetch(&t->unused, 1, __ATOMIC_RELAXED);
}

/* Looks up, and with `insert` interns, a prepared key. */
static const atab_atom *find_or_insert(atab_table *t, const atab__key *k,
                                       const char *u8, int insert)
{
    atab__shard *sh = shard_of(t, k->hash);
    size_t ins = 0;
    const atab_atom *a;

    pthread_mutex_lock(&sh->lock);
    a = shard_find(sh, k, &ins);
    if (a) {
        take_ref(t, a);
    } else if (u8 && k->len <= t->static_maxlen &&
               (a = atab__static_find(t, u8, k->len)) != NULL) {
        if (shard_insert(t, sh, k, slot_make(a, k->hash)) == 0)   /* cache it */
            sh->statics++;
        atab__set_error(ATAB_OK);   /* failing to cache is benign */
    } else if (insert) {
        atab_atom *na = atab__atom_new(t, k);
        if (na && shard_insert(t, sh, k, slot_make(na, k->hash)) != 0) {
            atab__atom_free(t, na);
            na = NULL;
        }
        a = na;
    }
    pthread_mutex_unlock(&sh->lock);
    return a;
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

static const atab_atom *intern_bytes(atab_table *t, const char *s, size_t len,
                                     int insert)
{
    atab__key k;
    if (check_bytes(t, s, len) != 0)
        return NULL;
    k.s = len ? s : "";
    k.u16 = NULL;
    k.n16 = 0;
    k.len = len;
    k.hash = atab__hash_bytes(t->seed, k.s, len);
    return find_or_insert(t, &k, k.s, insert);
}

const atab_atom *atab_intern(atab_table *t, const char *s, size_t len)
{
    return intern_bytes(t, s, len, 1);
}

const atab_atom *atab_lookup(atab_table *t, const char *s, size_t len)
{
    return intern_bytes(t, s, len, 0);
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

/* Frees a locked shard's zero-count dynamic atoms; returns how many. */
static size_t shard_sweep(atab_table *t, atab__shard *sh)
{
    size_t freed = 0;
    for (size_t i = 0; sh->slots && i <= sh->mask; i++) {
        uint64_t s = sh->slots[i];
        if (!slot_live(s))
            continue;
        atab_atom *a = (atab_atom *)slot_atom(s);
        if (atab_is_static(a) || atab__refcnt(a) != 0)
            continue;
        atab__atom_free(t, a);
        sh->slots[i] = TOMB;
        sh->used--;
        sh->tombs++;
        freed++;
    }
    size_t cap = sh->slots ? sh->mask + 1 : 0;
    if (freed && (sh->tombs > cap / 4 || capacity_for(sh->used) < cap / 2))
        shard_rebuild(t, sh, capacity_for(sh->used));   /* benign if it fails */
    return freed;
}

size_t atab_gc(atab_table *t)
{
    size_t freed = 0;
    if (!t)
        return 0;
    __atomic_store_n(&t->unused, 0, __ATOMIC_RELAXED);
    for (unsigned i = 0; i < ATAB__SHARDS; i++) {
        atab__shard *sh = &t->shards[i];
        pthread_mutex_lock(&sh->lock);
        freed += shard_sweep(t, sh);
        pthread_mutex_unlock(&sh->lock);
    }
    return freed;
}

/* The sweep a release triggers runs on the releasing thread; a second
** thread crossing the threshold meanwhile does not wait for it. */
static void maybe_sweep(atab_table *t)
{
    size_t unused = __atomic_add_fetch(&t->unused, 1, __ATOMIC_RELAXED);
    if (unused < t->sweep_threshold)
        return;
    if (__atomic_exchange_n(&t->sweeping, 1, __ATOMIC_ACQUIRE))
        return;
    atab_gc(t);
    __atomic_store_n(&t->sweeping, 0, __ATOMIC_RELEASE);
}

int atab_release(atab_table *t, const atab_atom *a)
{
    if (!t || !a) {
        atab__set_error(ATAB_EINVAL);
        return ATAB_EINVAL;
    }
    if (atab_is_static(a))
        return ATAB_OK;
    uint32_t *rc = (uint32_t *)&a->atab__refcnt;
    uint32_t c = __atomic_load_n(rc, __ATOMIC_RELAXED);
    do {
        if (c == 0) {
            atab__set_error(ATAB_EREFS);
            return ATAB_EREFS;
        }
        if (c >= ATAB__REF_SAT)
            return ATAB_OK;   /* saturated: immortal */
    } while (!__atomic_compare_exchange_n(rc, &c, c - 1, 1, __ATOMIC_RELEASE,
                                          __ATOMIC_RELAXED));
    if (c == 1)
        maybe_sweep(t);
    return ATAB_OK;
}

void atab__table_visit(atab_table *t, atab__visit_fn fn, void *ud)
{
    for (unsigned i = 0; i < ATAB__SHARDS; i++) {
        atab__shard *sh = &t->shards[i];
        pthread_mutex_lock(&sh->lock);
        for (size_t j = 0; sh->slots && j <= sh->mask; j++)
            if (slot_live(sh->slots[j]))
                fn(ud, slot_atom(sh->slots[j]));
        pthread_mutex_unlock(&sh->lock);
    }
}

void atab__table_visit_shards(atab_table *t, atab__array_fn array_fn,
                              atab__visit_fn fn, void *ud)
{
    for (unsigned i = 0; i < ATAB__SHARDS; i++) {
        atab__shard *sh = &t->shards[i];
        pthread_mutex_lock(&sh->lock);   /* this shard only, never all */
        if (sh->slots)
            array_fn(ud, sh->slots, (sh->mask + 1) * sizeof *sh->slots);
        for (size_t j = 0; sh->slots && j <= sh->mask; j++)
            if (slot_live(sh->slots[j]))
                fn(ud, slot_atom(sh->slots[j]));
        pthread_mutex_unlock(&sh->lock);
    }
}

int atab_get_stats(atab_table *t, atab_stats *out)
{
    if (!t || !out) {
        atab__set_error(ATAB_EINVAL);
        return ATAB_EINVAL;
    }
    memset(out, 0, sizeof *out);
    for (unsigned i = 0; i < ATAB__SHARDS; i++) {
        atab__shard *sh = &t->shards[i];
        pthread_mutex_lock(&sh->lock);
        for (size_t j = 0; sh->slots && j <= sh->mask; j++) {
            uint64_t s = sh->slots[j];
            if (!slot_live(s) || atab_is_static(slot_atom(s)))
                continue;
            out->atoms++;
            out->unused += atab__refcnt(slot_atom(s)) == 0;
        }
        out->statics_seen += sh->statics;
        out->capacity += sh->slots ? sh->mask + 1 : 0;
        pthread_mutex_unlock(&sh->lock);
    }
    out->bytes = __atomic_load_n(&t->bytes, __ATOMIC_RELAXED);
    return ATAB_OK;
}

size_t atab_count(atab_table *t)
{
    atab_stats st;
    return atab_get_stats(t, &st) == ATAB_OK ? st.atoms : 0;
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
    if (atab__static_init(t, o) != 0)
        return -1;
    if (o->initial_capacity) {
        size_t per = o->initial_capacity / ATAB__SHARDS + 1;
        for (unsigned i = 0; i < ATAB__SHARDS; i++)
            shard_rebuild(t, &t->shards[i], capacity_for(per));   /* benign */
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
        for (size_t j = 0; sh->slots && j <= sh->mask; j++) {
            uint64_t s = sh->slots[j];
            if (slot_live(s) && !atab_is_static(slot_atom(s)))
                atab__atom_free(t, (atab_atom *)slot_atom(s));
        }
        if (sh->slots)
            atab__free(t, sh->slots, (sh->mask + 1) * sizeof *sh->slots);
        pthread_mutex_destroy(&sh->lock);
    }
    atab__static_fini(t);
    atab_allocator al = t->alloc;
    al.free(al.ud, t->raw, ATAB__TABLE_ALLOC);
}

void atab_table_free(atab_table *t)
{
    if (!t)
        return;
    atab__table_destroy(t);
}
