/* SPDX-License-Identifier: MIT */
/*
** test_cache.c - the per-thread cache (thread.h): hits it serves return the
** atom of their key, its spares go back to the counts on every flush and
** when its thread exits, and nothing it keeps outlives a sweep.
*/
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio.h>

#include "test_util.h"
#include "atab_int.h"

#define SEED 7

/* The cache set of key k under SEED. */
static unsigned set_of(const char *k)
{
    return (unsigned)(atab__hash_bytes(SEED, k, strlen(k)) %
                      (ATAB__CACHE_SIZE / ATAB__CACHE_WAYS));
}

/* n keys of one cache set under SEED: "key-0" and the next "key-<i>" of
** its set. */
static void keys_of_one_set(char (*keys)[32], unsigned n)
{
    snprintf(keys[0], sizeof keys[0], "key-0");
    unsigned set = set_of(keys[0]);
    for (unsigned i = 1, got = 1; got < n; i++) {
        snprintf(keys[got], sizeof keys[got], "key-%u", i);
        if (set_of(keys[got]) == set)
            got++;
    }
}

/* A short key's cache set and tag (ATAB__HASH_EARLY's bits of its hash)
** are its keys' product's, which the hit path has a multiply sooner, for
** the key's bytes and for an atom's characters alike; and the length is in
** that product: runs of one byte, 1 to 32 long, all differ there. */
static void a_short_keys_cache_bits_come_before_its_last_multiply(void **state)
{
    (void)state;
    atab__hkeys hk = atab__hash_keys(SEED);
    char buf[8 + 40], *c = buf + 8;   /* 8 bytes before c, as an atom's header */
    uint64_t seen[ATAB__SHORT_KEY + 1];
    for (unsigned i = 0; i < 4000; i++) {
        size_t len = i % (ATAB__SHORT_KEY + 1);
        for (size_t j = 0; j < len; j++)
            c[j] = (char)('a' + (i * 7 + j * 13) % 26);
        uint64_t h = atab__hash_short_keyed(&hk, c, len);
        assert_true(h == atab__hash_short(SEED, c, len));
        assert_true(h == atab__hash_bytes(SEED, c, len));
        assert_true((h & ATAB__HASH_EARLY) == (atab__hash_pre(&hk, c, len) & ATAB__HASH_EARLY));
        if (len > 0 && len <= 16)
            assert_true(atab__hash_atom_pre(&hk, c, len) == atab__hash_pre(&hk, c, len));
    }
    memset(c, 'x', 32);
    for (size_t len = 1; len <= ATAB__SHORT_KEY; len++) {
        seen[len] = atab__hash_pre(&hk, c, len) & ATAB__HASH_EARLY;
        for (size_t m = 1; m < len; m++)
            assert_true(seen[m] != seen[len]);
    }
}

/* More keys than a set has ways, hit in runs and in turns: each gets its
** own atom every time, and every reference and spare comes back. */
static void keys_of_one_set_each_get_their_own_atom(void **state)
{
    (void)state;
    enum { N = ATAB__CACHE_WAYS + 1 };
    char k[N][32];
    keys_of_one_set(k, N);
    atab_table *t = sweeping_table(NULL, SEED, SIZE_MAX);
    const atab_atom *a[N];
    long held[N];
    for (int j = 0; j < N; j++) {
        a[j] = atab_intern_cstr(t, k[j]);
        held[j] = 1;
        for (int i = 0; i < j; i++)
            assert_ptr_not_equal(a[i], a[j]);
    }
    for (int i = 0; i < 300; i++) {   /* runs of each, then turns */
        int j = (i / 50) % 2 ? i % N : (i / 10) % N;
        const atab_atom *x = atab_intern_cstr(t, k[j]);
        assert_ptr_equal(x, a[j]);
        assert_string_equal(atab_chars(x), k[j]);
        held[j]++;
    }
    for (int j = 0; j < N; j++) {
        while (held[j]--)
            assert_int_equal(atab_release(t, a[j]), ATAB_OK);
        assert_int_equal(atab_release(t, a[j]), ATAB_EREFS);
    }
    assert_int_equal(atab_gc(t), N);
    assert_int_equal(atab_count(t), 0);
    atab_table_free(t);
}

#ifndef ATAB_DEBUG   /* debug builds keep no records, so no caches */
/* Way 0 and way 1 of key k's set on this thread's record (the last used). */
static uint64_t way_of(atab_table *t, const char *k, int way)
{
    assert_ptr_equal(atab__tls_last.rec->t, t);
    return atab__cache_slot(atab__tls_last.rec, atab__hash_bytes(SEED, k, strlen(k)))[way];
}

/* A set keeps the two atoms hit last, the one hit last in way 0: a hit in
** way 1 is served there (a spare taken, the count left alone) and moves
** it to way 0, and a third atom's entry pushes out the one hit longest
** ago, whose spares go back to its count. */
static void a_set_keeps_the_two_atoms_hit_last(void **state)
{
    (void)state;
    char k[3][32];
    keys_of_one_set(k, 3);
    atab_table *t = sweeping_table(NULL, SEED, SIZE_MAX);
    const atab_atom *a[3];
    for (int j = 0; j < 3; j++)
        a[j] = atab_intern_cstr(t, k[j]);   /* made: no entry yet */
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < 2; i++)   /* an entry, then spares for it */
            assert_ptr_equal(atab_intern_cstr(t, k[j]), a[j]);
    uint32_t c0 = atab__count(a[0]), c1 = atab__count(a[1]);
    assert_true(c1 > 3);   /* three held, and spares */
    assert_ptr_equal(atab__ent_atom(way_of(t, k[0], 0)), a[1]);
    assert_ptr_equal(atab__ent_atom(way_of(t, k[0], 1)), a[0]);
    unsigned spares = atab__spares(way_of(t, k[0], 1));
    assert_true(spares > 0);

    assert_ptr_equal(atab_intern_cstr(t, k[0]), a[0]);   /* from way 1 */
    assert_int_equal(atab__count(a[0]), c0);
    assert_ptr_equal(atab__ent_atom(way_of(t, k[0], 0)), a[0]);
    assert_int_equal(atab__spares(way_of(t, k[0], 0)), spares - 1);
    assert_ptr_equal(atab__ent_atom(way_of(t, k[0], 1)), a[1]);

    for (int i = 0; i < 2; i++)   /* the third: a[1], hit longest ago, goes */
        assert_ptr_equal(atab_intern_cstr(t, k[2]), a[2]);
    assert_ptr_equal(atab__ent_atom(way_of(t, k[0], 0)), a[2]);
    assert_ptr_equal(atab__ent_atom(way_of(t, k[0], 1)), a[0]);
    assert_int_equal(atab__count(a[1]), 3);   /* its spares back: what is held */

    long held[3] = {4, 3, 3};
    for (int j = 0; j < 3; j++)
        while (held[j]--)
            assert_int_equal(atab_release(t, a[j]), ATAB_OK);
    assert_int_equal(atab_gc(t), 3);
    assert_int_equal(atab_count(t), 0);
    atab_table_free(t);
}

/* Thread B of two_caches_keep_spares_of_an_atom_nobody_holds: hits X once
** (from the table: an entry for it), releases it when told, then waits to
** exit (its exit would give its spares back). */
typedef struct spare_keeper {
    atab_table *t;
    const atab_atom *x;
    sem_t hit, go, released, done;
} spare_keeper;

static void *hit_then_release_x(void *arg)
{
    spare_keeper *k = arg;
    assert_ptr_equal(atab_intern_cstr(k->t, atab_chars(k->x)), k->x);
    sem_post(&k->hit);
    sem_wait(&k->go);
    assert_int_equal(atab_release(k->t, k->x), ATAB_OK);
    sem_post(&k->released);
    sem_wait(&k->done);
    return NULL;
}

/* A release keeps its reference as a spare while the count is above this
** thread's spares and that reference; another thread's spares count there
** as a holder (the count cannot tell them apart), so once one cache keeps
** spares of X, the last holder's release on another thread keeps its
** reference too (two last releases at the same moment end the same way):
** X's count is the two caches' spares, nobody holds it, and it is on no
** queue. Queue sweeps pass it by (both entries marked it SPARED: a queue
** sweep would leave it for a full sweep even had it been queued). A flush
** gives the spares back, after which a report counts it unused, and the
** next full sweep frees it: no memory is kept past atab_gc. */
static void two_caches_keep_spares_of_an_atom_nobody_holds_until_a_full_sweep(void **state)
{
    (void)state;
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = sweeping_table(&al, SEED, 4);   /* queues of 4 */
    spare_keeper k = {t, atab_intern_cstr(t, "kept-by-two"), {{0}}, {{0}}, {{0}}, {{0}}};
    sem_init(&k.hit, 0, 0);
    sem_init(&k.go, 0, 0);
    sem_init(&k.released, 0, 0);
    sem_init(&k.done, 0, 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, hit_then_release_x, &k), 0);
    sem_wait(&k.hit);
    assert_int_equal(atab__count(k.x), 2);
    assert_int_equal(atab_release(t, k.x), ATAB_OK);   /* B holds X: kept as a spare */
    assert_int_equal(atab__count(k.x), 2);
    sem_post(&k.go);
    sem_wait(&k.released);
    assert_int_equal(atab__count(k.x), 2);   /* this thread's spare and B's: no holder */

    for (int i = 0; i < 8; i++) {   /* two queue sweeps of atoms made and released here */
        char key[16];
        snprintf(key, sizeof key, "churn-%d", i);
        assert_int_equal(atab_release(t, atab_intern_cstr(t, key)), ATAB_OK);
    }
    assert_int_equal(atab_count(t), 1);   /* X: no queue sweep saw it */
    assert_int_equal(atab__count(k.x), 2);

    atab_stats st;
    assert_int_equal(atab_get_stats(t, &st), ATAB_OK);   /* the spares back */
    assert_int_equal(st.atoms, 1);
    assert_int_equal(st.unused, 1);
    assert_int_equal(atab_gc(t), 1);
    assert_int_equal(atab_count(t), 0);
    assert_null(atab_lookup(t, "kept-by-two", 11));

    sem_post(&k.done);
    pthread_join(th, NULL);
    atab_table_free(t);
    assert_int_equal(c.live, 0);
    sem_destroy(&k.hit);
    sem_destroy(&k.go);
    sem_destroy(&k.released);
    sem_destroy(&k.done);
}
#endif

/* Hits take spares in bulk; once every reference is released, the atom is
** unused (the spares went with the last release) and one more release is
** refused. */
static void spares_taken_in_bulk_leave_with_the_last_holder(void **state)
{
    (void)state;
    atab_table *t = sweeping_table(NULL, SEED, SIZE_MAX);
    const atab_atom *a = atab_intern_cstr(t, "bulk");
    for (int i = 0; i < 100; i++)
        assert_ptr_equal(atab_intern_cstr(t, "bulk"), a);
    for (int i = 0; i < 101; i++)
        assert_int_equal(atab_release(t, a), ATAB_OK);
    assert_int_equal(atab_release(t, a), ATAB_EREFS);
    atab_stats st;
    assert_int_equal(atab_get_stats(t, &st), ATAB_OK);
    assert_int_equal(st.atoms, 1);
    assert_int_equal(st.unused, 1);
    assert_int_equal(atab_gc(t), 1);
    assert_int_equal(atab_count(t), 0);
    atab_table_free(t);
}

typedef struct hitter {
    atab_table *t;
    const atab_atom *a;
} hitter;

/* Hits the atom 50 times and keeps one of those references. */
static void *hit_and_keep_one(void *arg)
{
    hitter *h = arg;
    for (int i = 0; i < 50; i++)
        assert_ptr_equal(atab_intern_cstr(h->t, atab_chars(h->a)), h->a);
    for (int i = 0; i < 49; i++)
        atab_release(h->t, h->a);
    return NULL;
}

static int count_of(void *ud, const atab_atom *a, uint32_t count)
{
    (void)a;
    *(uint32_t *)ud = count;
    return ATAB_OK;
}

/* A thread that exits gives its spares back: the count is then exactly
** what holders hold. */
static void a_thread_that_exits_gives_its_spares_back(void **state)
{
    (void)state;
    atab_table *t = sweeping_table(NULL, SEED, SIZE_MAX);
    hitter h = {t, atab_intern_cstr(t, "kept-by-two")};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, hit_and_keep_one, &h), 0);
    pthread_join(th, NULL);
    uint32_t count = 0;
    assert_int_equal(atab_foreach(t, count_of, &count), ATAB_OK);
    assert_int_equal(count, 2);   /* this thread's and the one it kept */
    assert_int_equal(atab_release(t, h.a), ATAB_OK);
    assert_int_equal(atab_release(t, h.a), ATAB_OK);
    assert_int_equal(atab_release(t, h.a), ATAB_EREFS);
    assert_int_equal(atab_gc(t), 1);
    atab_table_free(t);
}

/* A sweep frees an atom whose spares a cache held (a flush gave them
** back); a later intern of its key makes a new atom, and never reads the
** freed one (ASan would see it). */
static void a_sweep_leaves_the_cache_nothing_stale(void **state)
{
    (void)state;
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = sweeping_table(&al, SEED, 1);
    for (int round = 0; round < 3; round++) {
        const atab_atom *a = atab_intern_cstr(t, "stale?");
        for (int i = 0; i < 40; i++)
            assert_ptr_equal(atab_intern_cstr(t, "stale?"), a);
        for (int i = 0; i < 41; i++)
            assert_int_equal(atab_release(t, a), ATAB_OK);
        atab_gc(t);
        assert_int_equal(atab_count(t), 0);
        assert_null(atab_lookup(t, "stale?", 6));
    }
    atab_table_free(t);
    assert_int_equal(c.live, 0);
}

/* Static atoms are served from the cache too, with no count and no atom
** made. */
static void a_static_atom_hit_again_is_the_same_static_atom(void **state)
{
    (void)state;
    atab_table *t = atab_table_new(NULL);
    const atab_atom *a = atab_intern_cstr(t, "div");
    assert_true(atab_is_static(a));
    for (int i = 0; i < 100; i++)
        assert_ptr_equal(atab_intern_cstr(t, "div"), a);
    assert_int_equal(atab_count(t), 0);
    assert_int_equal(atab_release(t, a), ATAB_OK);
    atab_table_free(t);
}

#ifndef ATAB_DEBUG
/* This thread's cache entry of atom a on t (its record is the last one
** used: the caller interned a just before). */
static const uint64_t *entry_of(atab_table *t, const atab_atom *a)
{
    assert_ptr_equal(atab__tls_last.rec->t, t);
    return atab__cache_slot(atab__tls_last.rec, atab__atom_hash(t, a));
}
#endif

/* A static atom's hits are served from its entry with no section and no
** write: the entry and the record's section count stay as they were. A
** flush empties the entry (the next hit makes it again), and a thread
** that hits a static atom while flushes run beside it (a sweep flushes
** every cache) always gets that atom: the flusher's store and the hit's
** unguarded read of the entry are atomics (ThreadSanitizer runs this). */
typedef struct static_hitter {
    atab_table *t;
    const atab_atom *a;
    int stop;   /* atomic */
    long wrong, hits;   /* hits: atomic */
} static_hitter;

static void *hit_static_until_stopped(void *p)
{
    static_hitter *h = p;
    while (!__atomic_load_n(&h->stop, __ATOMIC_ACQUIRE)) {
        if (atab_intern(h->t, "div", 3) != h->a)
            h->wrong++;
        __atomic_add_fetch(&h->hits, 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

static void a_static_hit_writes_nothing_and_enters_no_section(void **state)
{
    (void)state;
    atab_options o = plain_options(NULL, SEED);
    o.flags &= ~(unsigned)ATAB_NO_DEFAULT_STATICS;   /* "div" is a default static atom */
    o.sweep_threshold = SIZE_MAX;
    atab_table *t = atab_table_new(&o);
    const atab_atom *a = atab_intern_cstr(t, "div");
    assert_true(atab_is_static(a));
    assert_ptr_equal(atab_intern_cstr(t, "div"), a);   /* the entry is made by now */
#ifndef ATAB_DEBUG   /* debug builds keep no records, so no caches */
    const uint64_t *e = entry_of(t, a);
    uint64_t before = *e;
    assert_ptr_equal(atab__ent_atom(before), a);
    assert_true(before & ATAB__ENT_STATIC);
    /* a value no section's enter or leave stores: one of them would show */
    atab__tls_last.rec->seq = 7;
    for (int i = 0; i < 1000; i++)
        assert_ptr_equal(atab_intern(t, "div", 3), a);
    assert_int_equal(*e, before);
    assert_int_equal(atab__tls_last.rec->seq, 7);
    atab__tls_last.rec->seq = ATAB__SEQ_OUT;
    atab_gc(t);   /* flushes this thread's cache */
    assert_int_equal(*e, 0);
    assert_ptr_equal(atab_intern(t, "div", 3), a);
#endif

    static_hitter h = {t, a, 0, 0, 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, hit_static_until_stopped, &h), 0);
    while (__atomic_load_n(&h.hits, __ATOMIC_ACQUIRE) == 0)
        sched_yield();
    long from = __atomic_load_n(&h.hits, __ATOMIC_ACQUIRE);
    for (int i = 0; i < 200 || __atomic_load_n(&h.hits, __ATOMIC_ACQUIRE) < from + 1000; i++) {
        atab_release(t, atab_intern_cstr(t, "flush-me"));
        atab_gc(t);   /* a full sweep: flushes the hitter's cache too */
    }
    __atomic_store_n(&h.stop, 1, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    assert_int_equal(h.wrong, 0);
    atab_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_short_keys_cache_bits_come_before_its_last_multiply),
        cmocka_unit_test(keys_of_one_set_each_get_their_own_atom),
#ifndef ATAB_DEBUG
        cmocka_unit_test(a_set_keeps_the_two_atoms_hit_last),
        cmocka_unit_test(two_caches_keep_spares_of_an_atom_nobody_holds_until_a_full_sweep),
#endif
        cmocka_unit_test(spares_taken_in_bulk_leave_with_the_last_holder),
        cmocka_unit_test(a_thread_that_exits_gives_its_spares_back),
        cmocka_unit_test(a_sweep_leaves_the_cache_nothing_stale),
        cmocka_unit_test(a_static_atom_hit_again_is_the_same_static_atom),
        cmocka_unit_test(a_static_hit_writes_nothing_and_enters_no_section),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
