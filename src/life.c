/* SPDX-License-Identifier: MIT */
/*
** life.c - the table as a whole: its creation (options, seed, static
** sets), its free, the external handles that may outlive that free
** (atab_table_free leaves the table to the last handle's release), and
** the calls over all of its atoms (count, statistics, foreach). The slot
** arrays are table.c's, the sweep sweep.c's, the hot path intern.c's.
*/
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

#include "atab_int.h"
#include "probe.h"

#if ATAB__PREFETCHW_ASM
#include <cpuid.h>
#endif

#define QUEUE_MAX 2048   /* atoms a thread queues before it sweeps them */

/* ---- the whole table: statistics, count, foreach ---- */

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
        atab__shard_take(t, sh);
        out->statics_seen += sh->statics;
        out->capacity += atab__shard_cap(sh);
        atab__shard_drop(sh);
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
        atab__shard_take(t, sh);
        n += sh->used - sh->statics;
        atab__shard_drop(sh);
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
    atab__shard_take(t, sh);
    if (sh->used - sh->statics > cap) {   /* allocated under the lock, as inserts do
                                             (the chunks left empty go first at the limit) */
        cap = sh->used - sh->statics;
        if (!(v = atab__alloc_or_purge(t, cap * sizeof *v))) {
            atab__shard_drop(sh);
            return atab_last_error();
        }
    }
    size_t sweeps = __atomic_load_n(&t->sweeps, __ATOMIC_SEQ_CST);
    n = collect_shard(sh, v, cap);
    atab__shard_drop(sh);
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
    if (!atab__atom_of(t, a))   /* another table's: its release here would be refused */
        return atab__fail(ATAB_EINVAL);
    /* on the count, not from a thread's spares: a host string's handle is
    ** taken and dropped once each, and finding a cache entry would hash
    ** the characters (the caller holds a: never killed); its release finds
    ** the entry only for an atom a cache ever kept spares of
    ** (atab__release_direct) */
    atab__count_take(a, 1);
    __atomic_add_fetch(&t->hstate, 2, __ATOMIC_RELAXED);
    return a;
}

static void table_destroy(atab_table *t);

/* A handle's release with no handle out: refused and counted. */
static int handle_misuse(atab_table *t)
{
    __atomic_add_fetch(&t->misuse, 1, __ATOMIC_RELAXED);
    atab__set_error(ATAB_EREFS);
    return ATAB_EREFS;
}

int atab_external_release(atab_table *t, const atab_atom *a)
{
    if (!t || !a) {
        atab__set_error(ATAB_EINVAL);
        return ATAB_EINVAL;
    }
    if (atab_is_static(a))
        return ATAB_OK;   /* never touches the table: it may be gone */
    if (!(__atomic_load_n(&t->hstate, __ATOMIC_ACQUIRE) >> 1))
        return handle_misuse(t);   /* none out: a release too many, nothing touched */
    if (!atab__atom_of(t, a)) {   /* another table's atom: not a handle of t's, nothing touched */
        __atomic_add_fetch(&t->misuse, 1, __ATOMIC_RELAXED);
        atab__set_error(ATAB_EINVAL);
        return ATAB_EINVAL;
    }
    int rc = atab__release_direct(t, a);   /* as acquire took it */
    if (rc != ATAB_OK)
        return rc;
    ATAB__PAUSE("external_release:dropped", t);
    /* The handle's count comes off after the reference (it keeps the table
    ** alive till then), never below 0: two releases of the last handle at
    ** once find it gone in the second (its reference was dropped; the
    ** count may not have shown it). */
    size_t h = __atomic_load_n(&t->hstate, __ATOMIC_RELAXED);
    do {
        if (!(h >> 1))
            return handle_misuse(t);
    } while (!__atomic_compare_exchange_n(&t->hstate, &h, h - 2, 1, __ATOMIC_ACQ_REL,
                                          __ATOMIC_RELAXED));
    if (h - 2 == CLOSING)
        table_destroy(t);   /* the last handle after atab_table_free */
    return ATAB_OK;
}

void atab_external_finalize(void *data, void *hint)
{
    if (!data) {   /* no characters: no atom before them to read */
        atab__set_error(ATAB_EINVAL);
        return;
    }
    atab_external_release(hint, atab_atom_of_chars(data));
}

void atab_external_finalize_napi(void *env, void *data, void *hint)
{
    (void)env;
    atab_external_finalize(data, hint);
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

/* May this table's hit path read a short key from up to 7 bytes before it
** (base.h)? Not under the Valgrind tools that check every byte read
** (memcheck: outside the key's block; helgrind and DRD: a race), which its
** launcher names in LD_PRELOAD (callgrind and cachegrind check none). */
static int reads_before_keys(void)
{
    static const char *const checkers[] = {"vgpreload_memcheck", "vgpreload_helgrind",
                                            "vgpreload_drd"};
    const char *pre = getenv("LD_PRELOAD");
    if (!ATAB__READ_BEFORE)
        return 0;
    for (size_t i = 0; pre && i < sizeof checkers / sizeof checkers[0]; i++)
        if (strstr(pre, checkers[i]))
            return 0;
    return 1;
}

/* Does this CPU have PREFETCHW (base.h: atab__prefetch_w)? x86 says so in
** CPUID leaf 0x80000001 (every AMD x86-64, Intel's since Broadwell); a
** build for a target that has it, or for another architecture, asks no one. */
static int cpu_prefetchw(void)
{
#if ATAB__PREFETCHW_ASM
    unsigned a, b, c, d;
    return __get_cpuid(0x80000001, &a, &b, &c, &d) && (c & bit_PRFCHW) != 0;
#else
    return 1;
#endif
}

static int table_init(atab_table *t, const atab_options *o)
{
    __atomic_add_fetch(&atab__live_tables, 1, __ATOMIC_RELAXED);   /* table_destroy: less one */
    t->seed = (o->flags & ATAB_FIXED_SEED) ? o->seed : random_seed(t);
    t->hkeys = atab__hash_keys(t->seed);
    t->key_page_mask = reads_before_keys() ? ATAB__PAGE_MASK : 0;
    t->sweep_threshold = o->sweep_threshold ? o->sweep_threshold : 10000;
    /* threads add their zeros to t->unused in batches of up to 32, at most
    ** 1/256 of the threshold: a sweep starts within that of it */
    t->zero_batch = (uint32_t)(t->sweep_threshold / 256 < 32 ? t->sweep_threshold / 256 : 32);
    if (!t->zero_batch)
        t->zero_batch = 1;
    t->queue_cap = t->sweep_threshold == SIZE_MAX ? 0
                   : t->sweep_threshold < QUEUE_MAX ? (uint32_t)t->sweep_threshold : QUEUE_MAX;
    t->memory_limit = o->memory_limit;
    t->pend_cap = t->memory_limit ? 0 : t->queue_cap;
    t->prefetchw = (uint32_t)cpu_prefetchw();
    t->checked_refs = (o->flags & ATAB_CHECKED_REFS) != 0;
    for (unsigned i = 0; i < ATAB__SHARDS; i++) {
        t->arrs[i] = atab__no_arr();
        t->shards[i].arr = &t->arrs[i];
    }
    pthread_mutex_init(&t->sweep_lock, NULL);
    atab__chunks_init(t);
    atab__threads_init(t);
    if (atab__static_init(t, o) != 0)
        return -1;
    if (o->initial_capacity) {
        atab_status saved = atab_last_error();
        size_t per = o->initial_capacity / ATAB__SHARDS + 1;
        for (unsigned i = 0; i < ATAB__SHARDS; i++)
            atab__rebuild(t, &t->shards[i], atab__code_for(per));   /* benign; no old array */
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
    __atomic_sub_fetch(&atab__live_tables, 1, __ATOMIC_RELAXED);
    atab__threads_fini(t);
    for (unsigned i = 0; i < ATAB__SHARDS; i++) {
        atab__shard *sh = &t->shards[i];
        if (!atab__is_array(*sh->arr))
            continue;   /* atab__no_slots: nothing in it, nothing to free */
        atab__arr v = atab__arr_of(*sh->arr);
        for (size_t j = 0; j < atab__arr_cap(v); j++) {
            if (!atab__slot_full(v, j))
                continue;
            const atab_atom *a = atab__slot_atom(*atab__slot_ptr(v, j));
            if (atab_is_static(a))
                continue;
            if (atab__carved(atab_len(a)))
                ATAB__PAUSE("chunk:put", a);   /* freed with its chunk, below */
            else
                atab__atom_free(t, NULL, (atab_atom *)a);
        }
        atab__free_arr(t, *sh->arr);
    }
    for (uint32_t i = 0; i < t->n_retired; i++)
        atab__free_arr(t, t->retired[i]);
    atab__chunks_fini(t);
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
