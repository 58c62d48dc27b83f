/* SPDX-License-Identifier: MIT */
/*
** test_cache.c - the per-thread cache (thread.h): hits it serves return the
** atom of their key, its spares go back to the counts on every flush and
** when its thread exits, and nothing it keeps outlives a sweep.
*/
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

#include "test_util.h"
#include "atab_int.h"

#define SEED 7

/* Two keys of the same cache entry under SEED: "key-<i>" and "key-<j>". */
static void colliding_keys(char *a, char *b, size_t size)
{
    static unsigned first[ATAB__CACHE_SIZE];   /* index + 1 of the first key seen */
    memset(first, 0, sizeof first);
    for (unsigned i = 0;; i++) {
        snprintf(b, size, "key-%u", i);
        unsigned slot = (unsigned)(atab__hash_bytes(SEED, b, strlen(b)) % ATAB__CACHE_SIZE);
        if (first[slot]) {
            snprintf(a, size, "key-%u", first[slot] - 1);
            return;
        }
        first[slot] = i + 1;
    }
}

static void two_keys_of_one_entry_each_get_their_own_atom(void **state)
{
    (void)state;
    char ka[32], kb[32];
    colliding_keys(ka, kb, sizeof ka);
    atab_table *t = sweeping_table(NULL, SEED, SIZE_MAX);
    const atab_atom *a = atab_intern_cstr(t, ka), *b = atab_intern_cstr(t, kb);
    assert_ptr_not_equal(a, b);
    long held_a = 1, held_b = 1;
    for (int i = 0; i < 200; i++) {   /* runs of each, then turns */
        const char *k = (i / 50) % 2 || i % 3 == 0 ? kb : ka;
        const atab_atom *x = atab_intern_cstr(t, k);
        assert_ptr_equal(x, k == ka ? a : b);
        assert_string_equal(atab_chars(x), k);
        *(k == ka ? &held_a : &held_b) += 1;
    }
    while (held_a--)
        assert_int_equal(atab_release(t, a), ATAB_OK);
    while (held_b--)
        assert_int_equal(atab_release(t, b), ATAB_OK);
    assert_int_equal(atab_gc(t), 2);
    assert_int_equal(atab_count(t), 0);
    atab_table_free(t);
}

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
    uint64_t before = *e, seq = atab__tls_last.rec->seq;
    assert_ptr_equal(atab__ent_atom(before), a);
    assert_true(before & ATAB__ENT_STATIC);
    for (int i = 0; i < 1000; i++)
        assert_ptr_equal(atab_intern(t, "div", 3), a);
    assert_int_equal(*e, before);
    assert_int_equal(atab__tls_last.rec->seq, seq);
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
        cmocka_unit_test(two_keys_of_one_entry_each_get_their_own_atom),
        cmocka_unit_test(spares_taken_in_bulk_leave_with_the_last_holder),
        cmocka_unit_test(a_thread_that_exits_gives_its_spares_back),
        cmocka_unit_test(a_sweep_leaves_the_cache_nothing_stale),
        cmocka_unit_test(a_static_atom_hit_again_is_the_same_static_atom),
        cmocka_unit_test(a_static_hit_writes_nothing_and_enters_no_section),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
