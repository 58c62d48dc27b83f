/* SPDX-License-Identifier: MIT */
/*
** test_alloc.c - the allocator hooks see every allocation and every free,
** with matching sizes; nothing leaks at atab_table_free; a failed
** allocation is an error that leaves the table intact.
*/
#include <pthread.h>
#include <semaphore.h>
#include <time.h>

#include "test_util.h"
#include "atab_int.h"   /* the shard locks (the no-lock test), atab__count */

static void hooks_see_everything_and_nothing_leaks(void **state)
{
    (void)state;
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = plain_table(&al);
    assert_non_null(t);
    assert_int_equal(c.allocs, 1);   /* the table object */
    char buf[32];
    for (int i = 0; i < 20000; i++) {
        snprintf(buf, sizeof buf, "k%d", i);
        const atab_atom *a = atab_intern_cstr(t, buf);
        if (i % 2)
            atab_release(t, a);
    }
    atab_gc(t);
    atab_stats st;
    atab_get_stats(t, &st);
    assert_int_equal(st.bytes, c.bytes);   /* the table's own account agrees */
    atab_table_free(t);
    assert_int_equal(c.live, 0);
    assert_int_equal(c.bytes, 0);
    assert_int_equal(c.allocs, c.frees);
    assert_false(c.size_mismatch);
}

/* A small atom is one block of header, characters and NUL carved from a
** chunk (src/chunk.h), rounded up to 8 bytes; a large one is one
** allocation of its own. */
static void one_atom_is_one_block_of_header_chars_and_nul(void **state)
{
    (void)state;
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = plain_table(&al);
    atab_intern_cstr(t, "warm");   /* this thread's first chunk */
    long allocs = c.allocs;
    atab_intern_cstr(t, "warm");   /* a hit allocates nothing */
    assert_int_equal(c.allocs, allocs);
    int64_t objects = report_amount(t, "explicit/atoms/dynamic/atom-objects", -1);
    int64_t slop = report_amount(t, "explicit/atoms/dynamic/slop", -1);
    const atab_atom *a = atab_intern_cstr(t, "0123456789");
    assert_int_equal(report_amount(t, "explicit/atoms/dynamic/atom-objects", -1),
                     objects + (int64_t)sizeof(atab_atom) + 11);
    assert_int_equal(report_amount(t, "explicit/atoms/dynamic/slop", -1), slop + 1);   /* to 20 */
    assert_int_equal(((uintptr_t)a) % 4, 0);
    assert_string_equal(atab_chars(a), "0123456789");
    /* the atom is 8 + 300 + 1 bytes: an allocation of its own (a new slot
    ** array may come with it) */
    char big[301];
    memset(big, 'b', 300);
    big[300] = '\0';
    atab_stats before, after;
    atab_get_stats(t, &before);
    atab_intern_cstr(t, big);
    atab_get_stats(t, &after);
    size_t atom_bytes = after.bytes - before.bytes;
    assert_true(atom_bytes == sizeof(atab_atom) + 301 ||
                atom_bytes > sizeof(atab_atom) + 301 + 8 * 8 - 1);
    assert_int_equal(sizeof(atab_atom), 8);
    atab_table_free(t);
}

/* Blocks freed back to a chunk that holds other atoms are carved again for
** new atoms of their size class before any new chunk; chunks left with no
** atom go back to the allocator at atab_gc. */
static void freed_blocks_are_reused_and_empty_chunks_go_back(void **state)
{
    (void)state;
#ifdef ATAB_DEBUG
    skip();   /* no records: every atom comes from the table's own chunk */
#endif
    enum { N = 3000 };
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_options o = plain_options(&al, 0);
    o.sweep_threshold = SIZE_MAX;   /* only atab_gc sweeps: no queues */
    atab_table *t = atab_table_new(&o);
    static const atab_atom *keep[N];
    char buf[32];
    atab_stats st;
    for (int i = 0; i < N; i++) {   /* 12 bytes each: one size class */
        snprintf(buf, sizeof buf, "first-%06d", i);
        assert_non_null(keep[i] = atab_intern_cstr(t, buf));
    }
    for (int i = 0; i < N; i += 2)
        assert_int_equal(atab_release(t, keep[i]), ATAB_OK);
    assert_int_equal(atab_gc(t), N / 2);
    uint32_t chunks = t->n_chunks;
    for (int i = 0; i < N; i += 2) {   /* the same class: the holes */
        snprintf(buf, sizeof buf, "again-%06d", i);
        assert_non_null(keep[i] = atab_intern_cstr(t, buf));
    }
    assert_int_equal(t->n_chunks, chunks);
    for (int i = 0; i < N; i++)
        assert_int_equal(atab_release(t, keep[i]), ATAB_OK);
    assert_int_equal(atab_gc(t), N);
    /* only the chunk this thread carves from is left (its thread's exit
    ** gives it back: test_threads), all of it free */
    assert_int_equal(t->n_chunks, 1);
    atab_get_stats(t, &st);
    assert_int_equal(st.bytes, c.bytes);   /* the table's account agrees */
    assert_int_equal(report_amount(t, "explicit/atoms/dynamic/free", -1),
                     ((atab__chunk *)t->chunks[0])->size);
    assert_int_equal(report_amount(t, "explicit/atoms/dynamic/atom-objects", -1), 0);
    atab_table_free(t);
    assert_int_equal(c.live, 0);
    assert_false(c.size_mismatch);
}

/* Slot arrays of 2 to 7 groups come from pools (chunk.h): a pool goes back
** to the allocator with its last array, so once every shard has outgrown
** them none is left, and the report counts what the table holds. */
static void pools_go_back_with_their_last_array(void **state)
{
    (void)state;
    enum { N = 12000 };   /* 187 atoms a shard: past 7 groups each */
    char buf[32];
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = plain_table(&al);
    int pooled_seen = 0;
    for (int i = 0; i < N; i++) {
        snprintf(buf, sizeof buf, "pool%d", i);
        assert_non_null(atab_intern_cstr(t, buf));
        pooled_seen |= t->pools != NULL;
    }
    assert_true(pooled_seen);
    for (unsigned i = 0; i < ATAB__SHARDS; i++)
        assert_false(atab__pooled(atab__arr_bytes(t->arrs[i])));
    assert_null(t->pools);
    atab_stats st;
    atab_get_stats(t, &st);
    assert_int_equal(st.bytes, c.bytes);   /* the table's account agrees */
    atab_table_free(t);
    assert_int_equal(c.live, 0);
}

static void a_failed_allocation_is_enomem_and_the_table_is_intact(void **state)
{
    (void)state;
    enum { N = 1000 };
    char buf[32];
    int total_failed = 0, points = 0;
    for (long fail = 2;; fail++) {   /* every allocation that N interns make */
        counting_alloc c = {0};
        atab_allocator al = ca_allocator(&c);
        atab_table *t = plain_table(&al);
        static const atab_atom *kept[N];
        int n = 0, failed = 0;
        c.fail_at = fail;
        for (int i = 0; i < N; i++) {
            snprintf(buf, sizeof buf, "oom%d", i);
            const atab_atom *a = atab_intern_cstr(t, buf);
            if (!a) {
                assert_int_equal(atab_last_error(), ATAB_ENOMEM);
                failed++;
                continue;
            }
            kept[n++] = a;
        }
        assert_true(failed <= 1);   /* 0 where the failure was benign */
        for (int i = 0; i < n; i++)
            assert_ptr_equal(atab_lookup(t, atab_chars(kept[i]), atab_len(kept[i])), kept[i]);
        atab_table_free(t);
        assert_int_equal(c.live, 0);
        if (c.attempts < fail)
            break;   /* the interns made fewer allocations */
        total_failed += failed;
        points++;
    }
    assert_true(points >= 20);
    assert_true(4 * total_failed >= 3 * points);   /* most points hit an intern's chunk or array */
}

static void the_default_allocator_works(void **state)
{
    (void)state;
    const atab_allocator *d = atab_default_allocator();
    assert_non_null(d->alloc);
    void *p = d->alloc(d->ud, 40);
    assert_non_null(p);
    if (d->usable_size)
        assert_true(d->usable_size(d->ud, p, 40) >= 40);
    d->free(d->ud, p, 40);
}

/* atab_allocator promises blocks aligned to 16, and the default allocator
** is one: every size, the smallest ones included (jemalloc's mallocx, and
** a process malloc that is jemalloc's, give 8-byte requests an 8-byte
** size class, aligned to 8 only). */
static void the_default_allocator_aligns_every_block_to_16(void **state)
{
    (void)state;
    const atab_allocator *d = atab_default_allocator();
    void *p[64];
    for (size_t size = 0; size <= 48; size++) {
        for (size_t i = 0; i < 64; i++) {
            p[i] = d->alloc(d->ud, size);
            assert_non_null(p[i]);
            if ((uintptr_t)p[i] % 16 != 0)
                fail_msg("alloc(%zu) gave %p, not aligned to 16", size, p[i]);
            if (d->usable_size)
                assert_true(d->usable_size(d->ud, p[i], size) >= size);
        }
        for (size_t i = 0; i < 64; i++)
            d->free(d->ud, p[i], size);
    }
}

/* ---- the hit path: no allocation, no lock ---- */

/* hits_take_no_lock holds every mutex of a table at once (67); TSan's
** deadlock detector tracks at most 64 per thread and aborts, so it is off
** for this program (races are still checked). */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer) && !defined(__SANITIZE_THREAD__)
#define __SANITIZE_THREAD__ 1
#endif
#endif
#ifdef __SANITIZE_THREAD__
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
    return "detect_deadlocks=0";
}
#endif

#define HIT_ATOMS 3000

static void hit_key(char *buf, size_t size, int i)
{
    if (i % 3 == 0)   /* long keys too: the > 16-byte compare */
        snprintf(buf, size, "a-rather-long-attribute-name-number-%d", i);
    else
        snprintf(buf, size, "k%d", i);
}

/* Hits of every kind: intern (UTF-8, C string, UTF-16 short and long),
** lookup, each reference released again. Returns the hits done. */
static long do_hits(atab_table *t)
{
    char buf[64];
    uint16_t u16[400];
    long n = 0;
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < HIT_ATOMS; i++) {
            hit_key(buf, sizeof buf, i);
            size_t len = strlen(buf);
            const atab_atom *a = atab_intern(t, buf, len);
            const atab_atom *b = atab_intern_cstr(t, buf);
            const atab_atom *c = atab_lookup(t, buf, len);
            for (size_t j = 0; j < len; j++)
                u16[j] = (uint16_t)(unsigned char)buf[j];
            const atab_atom *d = atab_intern_utf16(t, u16, len);
            if (!a || a != b || a != c || a != d)
                return -1;
            atab_release(t, a), atab_release(t, b), atab_release(t, c), atab_release(t, d);
            n += 4;
        }
    }
    for (int i = 0; i < 300; i++)   /* a UTF-16 key past the stack buffer */
        u16[i] = (uint16_t)('a' + i % 26);
    for (int i = 0; i < 100; i++, n++) {
        const atab_atom *a = atab_intern_utf16(t, u16, 300);
        if (!a || atab_release(t, a) != ATAB_OK)
            return -1;
    }
    return n;
}

static atab_table *warm_table(counting_alloc *c, atab_allocator *al)
{
    char buf[64];
    uint16_t u16[300];
    *al = ca_allocator(c);
    atab_table *t = plain_table(al);
    for (int i = 0; i < HIT_ATOMS; i++) {   /* one reference held on each */
        hit_key(buf, sizeof buf, i);
        if (!atab_intern_cstr(t, buf))
            return NULL;
    }
    for (int i = 0; i < 300; i++)
        u16[i] = (uint16_t)('a' + i % 26);
    if (!atab_intern_utf16(t, u16, 300))
        return NULL;
    return t;
}

static void hits_allocate_nothing(void **state)
{
    (void)state;
    counting_alloc c = {0};
    atab_allocator al;
    atab_table *t = warm_table(&c, &al);
    assert_non_null(t);
    assert_true(do_hits(t) > 0);   /* first hits: this thread's record */
    long attempts = c.attempts;
    long hits = do_hits(t);
    assert_true(hits > 4 * HIT_ATOMS);
    assert_int_equal(c.attempts, attempts);   /* not one allocation asked for */
    atab_table_free(t);
    assert_int_equal(c.live, 0);
}

typedef struct hitter {
    atab_table *t;
    pthread_barrier_t ready, locked;
    sem_t done;
    long hits;
} hitter;

static void *hit_thread(void *arg)
{
    hitter *h = arg;
    do_hits(h->t);                   /* registers this thread's record */
    pthread_barrier_wait(&h->ready);
    pthread_barrier_wait(&h->locked);
    h->hits = do_hits(h->t);         /* every table lock is held meanwhile */
    sem_post(&h->done);              /* (its exit hands its record back: a lock) */
    return NULL;
}

/* With every lock of the table held by another thread, hits still finish:
** they take none. (A hit that locked would block; the join gives up after
** 60 s so the test fails instead of hanging. Not a timing measure.) */
static void hits_take_no_lock(void **state)
{
    (void)state;
#ifdef ATAB_DEBUG
    skip();   /* debug builds count exactly, on the locked path */
#else
    counting_alloc c = {0};
    atab_allocator al;
    hitter h;
    pthread_t th;
    h.t = warm_table(&c, &al);
    assert_non_null(h.t);
    pthread_barrier_init(&h.ready, NULL, 2);
    pthread_barrier_init(&h.locked, NULL, 2);
    sem_init(&h.done, 0, 0);
    assert_int_equal(pthread_create(&th, NULL, hit_thread, &h), 0);
    pthread_barrier_wait(&h.ready);
    for (unsigned i = 0; i < ATAB__SHARDS; i++)
        atab__lock_take(&h.t->shards[i].lock);
    pthread_mutex_lock(&h.t->reg_lock);
    pthread_mutex_lock(&h.t->sweep_lock);
    pthread_barrier_wait(&h.locked);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 60;
    int rc = sem_timedwait(&h.done, &until);
    assert_int_equal(rc, 0);   /* else a hit is waiting for a lock */
    assert_true(h.hits > 4 * HIT_ATOMS);
    pthread_mutex_unlock(&h.t->sweep_lock);
    pthread_mutex_unlock(&h.t->reg_lock);
    for (unsigned i = 0; i < ATAB__SHARDS; i++)
        atab__lock_drop(&h.t->shards[i].lock);
    pthread_join(th, NULL);
    sem_destroy(&h.done);
    pthread_barrier_destroy(&h.ready);
    pthread_barrier_destroy(&h.locked);
    atab_table_free(h.t);
    assert_int_equal(c.live, 0);
#endif
}

typedef struct few {
    atab_table *t;
    const atab_atom *const *atoms;
    pthread_barrier_t *done;
    uint32_t seen[4];   /* the atoms' counts once every thread is done */
    int failed;
} few;

static void *few_thread(void *arg)
{
    few *f = arg;
    for (int i = 0; i < 20000; i++) {
        const atab_atom *want = f->atoms[i & 3];
        const atab_atom *a = atab_intern(f->t, atab_chars(want), atab_len(want));
        if (a != want || atab_release(f->t, a) != ATAB_OK)
            f->failed = 1;
    }
    pthread_barrier_wait(f->done);
    for (int i = 0; i < 4; i++)
        f->seen[i] = atab__count(f->atoms[i]);
    pthread_barrier_wait(f->done);   /* exits only once all have looked */
    return NULL;
}

/* Threads hitting the same few dynamic atoms write nothing shared: after 4
** threads x 20,000 hits, each atom's count (its header's cache line) has
** moved by at most the one spare reference each thread keeps for it, and
** is back where it was once the threads have exited and given their spares
** back (the word's SPARED flag, set once by the first spare kept, aside);
** the table's memory did not grow beyond a record per thread. */
static void hits_on_the_same_atoms_leave_their_counts_alone(void **state)
{
    (void)state;
#ifdef ATAB_DEBUG
    skip();   /* debug builds count on the atom, by design */
#else
    static const char *const names[4] = {"my-div", "my-class", "my-href", "my-data-id"};
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = plain_table(&al);
    const atab_atom *atoms[4];
    uint32_t before[4];
    pthread_t th[4];
    pthread_barrier_t done;
    few f[4];
    pthread_barrier_init(&done, NULL, 4);
    for (int i = 0; i < 4; i++) {
        atoms[i] = atab_intern_cstr(t, names[i]);
        assert_non_null(atoms[i]);
        assert_false(atab_is_static(atoms[i]));
    }
    for (int i = 0; i < 4; i++) {
        f[i].t = t, f[i].atoms = atoms, f[i].done = &done, f[i].failed = 0;
        before[i] = atab__count(atoms[i]);
    }
    long attempts = c.attempts;
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, few_thread, &f[i]), 0);
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_false(f[i].failed);
        for (int j = 0; j < 4; j++)
            assert_true(f[i].seen[j] <= before[j] + 4);   /* a spare per thread */
    }
    assert_true(c.attempts - attempts <= 4);   /* a record per thread */
    for (int i = 0; i < 4; i++)
        assert_int_equal(atab__count(atoms[i]), before[i]);
    pthread_barrier_destroy(&done);
    atab_table_free(t);
    assert_int_equal(c.live, 0);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hooks_see_everything_and_nothing_leaks),
        cmocka_unit_test(one_atom_is_one_block_of_header_chars_and_nul),
        cmocka_unit_test(freed_blocks_are_reused_and_empty_chunks_go_back),
        cmocka_unit_test(pools_go_back_with_their_last_array),
        cmocka_unit_test(a_failed_allocation_is_enomem_and_the_table_is_intact),
        cmocka_unit_test(the_default_allocator_works),
        cmocka_unit_test(the_default_allocator_aligns_every_block_to_16),
        cmocka_unit_test(hits_allocate_nothing),
        cmocka_unit_test(hits_take_no_lock),
        cmocka_unit_test(hits_on_the_same_atoms_leave_their_counts_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
