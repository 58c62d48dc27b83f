/* SPDX-License-Identifier: MIT */
/*
** test_external.c - external handles (host strings sharing an atom's chars),
** the deferred free of a table with handles out, and the host caches (one
** and several per table).
*/
#include <pthread.h>

#include "test_util.h"

/* A model host string: refcounted, pointing at the atom's chars, holding
** an external handle that its "finalizer" (the last unref) releases. */
typedef struct hstr {
    int rc;
    atab_table *t;
    const atab_atom *a;
    const char *chars;
} hstr;

typedef struct host {
    long created, dropped, finalized;
    int fail_create;
} host;

static void hstr_unref(host *h, hstr *s)
{
    if (--s->rc > 0)
        return;
    assert_int_equal(atab_external_release(s->t, s->a), ATAB_OK);
    h->finalized++;
    free(s);
}

static void *h_create(void *ud, atab_table *t, const atab_atom *a, unsigned *refs)
{
    host *h = ud;
    if (h->fail_create)
        return NULL;
    hstr *s = malloc(sizeof *s);
    assert_non_null(s);
    assert_ptr_equal(atab_external_acquire(t, a), a);
    s->rc = 1;
    s->t = t;
    s->a = a;
    s->chars = atab_chars(a);
    *refs = 1;
    h->created++;
    return s;
}

static void *h_hold(void *ud, void *p)
{
    (void)ud;
    ((hstr *)p)->rc++;
    return p;
}

static void h_drop(void *ud, void *p)
{
    host *h = ud;
    h->dropped++;
    hstr_unref(h, p);
}

static atab_host_ops host_ops(host *h)
{
    atab_host_ops o = {h_create, h_hold, h_drop, h};
    return o;
}

/* A test's host cache on a table on the counting allocator; never copied once open. */
typedef struct cache_fixture {
    host h;             /* the cache's host: counts strings made, dropped, finalized */
    counting_alloc c;   /* the table's allocator counts here */
    atab_table *t;
    atab_host_cache *hc;
} cache_fixture;

/* Opens f in place: the table's allocator points at f->c, the cache's ops at f->h. */
static void cache_fixture_open(cache_fixture *f)
{
    memset(f, 0, sizeof *f);
    atab_host_ops ops = host_ops(&f->h);       /* copied by the cache */
    atab_allocator al = ca_allocator(&f->c);   /* copied by the table */
    f->t = plain_table(&al);
    f->hc = atab_host_cache_new(f->t, &ops);
    assert_non_null(f->hc);
}

/* Frees the table, and with it the cache; checks that no block is left. */
static void cache_fixture_close(cache_fixture *f)
{
    atab_table_free(f->t);
    assert_int_equal(f->c.live, 0);
}

/* ---- handles ---- */

static void a_handle_keeps_its_atom_alive_across_sweeps(void **state)
{
    (void)state;
    atab_table *t = plain_table(NULL);
    const atab_atom *a = atab_intern_cstr(t, "held-by-a-host-string");
    assert_ptr_equal(atab_external_acquire(t, a), a);
    atab_release(t, a);                        /* only the handle is left */
    assert_int_equal(atab_gc(t), 0);
    assert_int_equal(atab_gc(t), 0);
    assert_string_equal(atab_chars(a), "held-by-a-host-string");
    assert_ptr_equal(atab_lookup(t, "held-by-a-host-string", 21), a);
    atab_release(t, a);
    assert_int_equal(atab_external_handles(t), 1);
    assert_int_equal(atab_external_release(t, a), ATAB_OK);
    assert_int_equal(atab_external_handles(t), 0);
    assert_int_equal(atab_gc(t), 1);
    assert_null(atab_lookup(t, "held-by-a-host-string", 21));
    atab_table_free(t);
}

static void releasing_a_handle_never_frees_an_atom_others_hold(void **state)
{
    (void)state;
    atab_table *t = plain_table(NULL);
    const atab_atom *a = atab_intern_cstr(t, "shared");
    for (int i = 0; i < 5; i++)
        atab_external_acquire(t, a);
    for (int i = 0; i < 5; i++)
        assert_int_equal(atab_external_release(t, a), ATAB_OK);
    assert_int_equal(atab_gc(t), 0);           /* the interner's reference */
    assert_ptr_equal(atab_lookup(t, "shared", 6), a);
    atab_release(t, a);
    atab_release(t, a);
    assert_int_equal(atab_gc(t), 1);
    atab_table_free(t);
}

static void the_report_counts_outstanding_handles(void **state)
{
    (void)state;
    atab_table *t = plain_table(NULL);
    const atab_atom *a = atab_intern_cstr(t, "a"), *b = atab_intern_cstr(t, "b");
    atab_external_acquire(t, a);
    atab_external_acquire(t, a);
    atab_external_acquire(t, b);
    assert_int_equal(report_amount(t, "atoms-external-handles", 99), 3);
    atab_external_release(t, a);
    assert_int_equal(report_amount(t, "atoms-external-handles", 99), 2);
    atab_external_release(t, a);
    atab_external_release(t, b);
    assert_int_equal(report_amount(t, "atoms-external-handles", 99), 0);
    atab_release(t, a);
    atab_release(t, b);
    atab_table_free(t);
}

static int64_t heap_sum;
static int sum_heap(void *ud, const char *path, int kind, int units,
                    int64_t amount, const char *desc)
{
    (void)ud; (void)path; (void)units; (void)desc;
    if (kind == ATAB_KIND_HEAP)
        heap_sum += amount;
    return 0;
}

static void the_report_counts_the_host_cache_s_memory(void **state)
{
    (void)state;
    cache_fixture f;
    cache_fixture_open(&f);   /* its allocator: usable == requested */
    const atab_atom *atoms[300];
    char buf[32];
    for (int i = 0; i < 300; i++) {
        snprintf(buf, sizeof buf, "reported-%d", i);
        atoms[i] = atab_intern_cstr(f.t, buf);
        if (i % 2)
            hstr_unref(&f.h, atab_host_cache_get(f.hc, atoms[i]));
        heap_sum = 0;
        assert_int_equal(atab_report(f.t, sum_heap, NULL), ATAB_OK);
        assert_int_equal(heap_sum, (int64_t)f.c.bytes);   /* every block counted */
    }
    for (int i = 0; i < 300; i++)
        atab_release(f.t, atoms[i]);
    atab_host_cache_trim(f.hc);
    heap_sum = 0;
    atab_report(f.t, sum_heap, NULL);
    assert_int_equal(heap_sum, (int64_t)f.c.bytes);
    cache_fixture_close(&f);
}

static void *report_loop(void *p)
{
    atab_table *t = p;
    for (int i = 0; i < 200; i++) {
        heap_sum = 0;   /* only this thread writes it meanwhile */
        assert_int_equal(atab_report(t, sum_heap, NULL), ATAB_OK);
    }
    return NULL;
}

static void reports_from_another_thread_while_the_cache_grows(void **state)
{
    (void)state;
    host h = {0};
    atab_host_ops ops = host_ops(&h);
    atab_table *t = plain_table(NULL);
    atab_host_cache *hc = atab_host_cache_new(t, &ops);
    assert_non_null(hc);
    pthread_t th;
    pthread_create(&th, NULL, report_loop, t);
    char buf[32];
    for (int i = 0; i < 5000; i++) {   /* grows, trims and clears meanwhile */
        snprintf(buf, sizeof buf, "grow-%d", i);
        const atab_atom *a = atab_intern_cstr(t, buf);
        hstr_unref(&h, atab_host_cache_get(hc, a));
        atab_release(t, a);
        if (i % 1500 == 0)
            atab_host_cache_clear(hc);
    }
    pthread_join(th, NULL);
    atab_table_free(t);
    assert_int_equal(h.finalized, h.created);
}

/* A static atom as a generated set lays it out: read-only, flag set. */
static const struct {
    atab_atom h;
    char c[4];
} static_foo = {{(3u << ATAB__LEN_SHIFT) | ATAB__STATIC | ATAB__ASCII, 0}, "foo"};

static void static_atoms_take_no_reference_and_no_handle(void **state)
{
    (void)state;
    const atab_atom *s = &static_foo.h;
    atab_table *t = plain_table(NULL);
    assert_ptr_equal(atab_external_acquire(t, s), s);
    assert_int_equal(atab_external_handles(t), 0);
    assert_int_equal(s->atab__refcnt, 0);
    assert_int_equal(atab_external_release(t, s), ATAB_OK);
    assert_int_equal(s->atab__refcnt, 0);
    atab_table_free(t);   /* no handle counted: freed at once */
}

static void finalizer_adapters_release_the_handle_from_the_chars(void **state)
{
    (void)state;
    atab_table *t = plain_table(NULL);
    const atab_atom *a = atab_intern_cstr(t, "finalized");
    assert_ptr_equal(atab_atom_of_chars(atab_chars(a)), a);
    atab_external_acquire(t, a);
    atab_external_acquire(t, a);
    /* as Node-API calls it: (env, data = the string's chars, hint = table) */
    atab_external_finalize_napi(NULL, (void *)atab_chars(a), t);
    assert_int_equal(atab_external_handles(t), 1);
    atab_external_finalize((void *)atab_chars(a), t);
    assert_int_equal(atab_external_handles(t), 0);
    assert_int_equal(atab_gc(t), 0);   /* the interner's reference is left */
    atab_release(t, a);
    assert_int_equal(atab_gc(t), 1);
    atab_table_free(t);
}

static void bad_arguments_are_einval(void **state)
{
    (void)state;
    atab_table *t = plain_table(NULL);
    const atab_atom *a = atab_intern_cstr(t, "x");
    assert_null(atab_external_acquire(NULL, a));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    assert_null(atab_external_acquire(t, NULL));
    assert_int_equal(atab_external_release(NULL, a), ATAB_EINVAL);
    assert_int_equal(atab_external_release(t, NULL), ATAB_EINVAL);
    assert_null(atab_host_cache_get(NULL, a));   /* no cache */
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    assert_null(atab_host_cache_new(t, NULL));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    atab_host_ops none = {NULL, NULL, NULL, NULL};
    assert_null(atab_host_cache_new(t, &none));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    assert_null(atab_host_cache_new(NULL, &none));
    assert_int_equal(atab_host_cache_trim(NULL), 0);
    assert_int_equal(atab_host_cache_clear(NULL), 0);
    assert_int_equal(atab_host_cache_count(NULL), 0);
    atab_host_cache_free(NULL);
    assert_int_equal(atab_external_handles(t), 0);
    atab_release(t, a);
    atab_table_free(t);
}

/* ---- the deferred free ---- */

static void table_free_with_handles_out_defers_until_the_last_release(void **state)
{
    (void)state;
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = plain_table(&al);
    const atab_atom *a = atab_intern_cstr(t, "outlives-the-table");
    const atab_atom *b = atab_intern_cstr(t, "also");
    const atab_atom *u = atab_intern_cstr(t, "unused-then");
    atab_external_acquire(t, a);
    atab_external_acquire(t, a);
    atab_external_acquire(t, b);
    atab_release(t, a);
    atab_release(t, b);
    atab_release(t, u);
    long before = c.live;
    atab_table_free(t);
    assert_true(c.live > 0);                   /* deferred */
    assert_true(c.live < before);              /* the unused atom went */
    assert_string_equal(atab_chars(a), "outlives-the-table");   /* ASan: no UAF */
    assert_null(atab_external_acquire(t, a)); /* closing: no new handles */
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    assert_int_equal(atab_external_release(t, a), ATAB_OK);
    assert_string_equal(atab_chars(b), "also");
    assert_int_equal(atab_external_release(t, b), ATAB_OK);
    assert_true(c.live > 0);
    assert_string_equal(atab_chars(a), "outlives-the-table");
    assert_int_equal(atab_external_release(t, a), ATAB_OK);   /* frees all */
    assert_int_equal(c.live, 0);
    assert_int_equal(c.size_mismatch, 0);
}

/* A handle released once too often (a host's finalizer run twice, or a
** release with no acquire) is refused while the table has no handle out:
** the interner's reference stays, the count of handles stays at 0, and
** the table is freed once, with a later handle as with none. */
static void a_release_with_no_handle_out_is_refused(void **state)
{
    (void)state;
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = plain_table(&al);
    const atab_atom *a = atab_intern_cstr(t, "released-too-often");
    const atab_atom *b = atab_intern_cstr(t, "handled-later");
    assert_ptr_equal(atab_external_acquire(t, a), a);
    assert_int_equal(atab_external_release(t, a), ATAB_OK);
    assert_int_equal(atab_external_release(t, a), ATAB_EREFS);   /* none out */
    assert_int_equal(atab_last_error(), ATAB_EREFS);
    assert_int_equal(atab_external_handles(t), 0);
    assert_int_equal(atab_gc(t), 0);   /* the interner's reference holds it still */
    assert_ptr_equal(atab_lookup(t, "released-too-often", 18), a);
    assert_int_equal(atab_release(t, a), ATAB_OK);   /* the lookup's */
    atab_stats st;
    atab_get_stats(t, &st);
    assert_int_equal(st.misuse, 1);
    assert_ptr_equal(atab_external_acquire(t, b), b);
    assert_int_equal(atab_external_handles(t), 1);
    atab_release(t, a);
    atab_release(t, b);
    atab_table_free(t);
    assert_true(c.live > 0);   /* deferred for b's handle */
    assert_string_equal(atab_chars(b), "handled-later");
    assert_int_equal(atab_external_release(t, b), ATAB_OK);   /* frees all */
    assert_int_equal(c.live, 0);
}

/* A handle released twice on the thread whose cache keeps spares of its
** atom (the interner's reference, released there): refused as atab_release
** refuses it, not taken from those spares, and another atom's handle stays
** counted, so its own release is not refused. */
static void a_release_too_many_is_refused_with_this_thread_s_spares(void **state)
{
    (void)state;
    atab_table *t = plain_table(NULL);
    const atab_atom *a = atab_intern_cstr(t, "spared-here");
    const atab_atom *b = atab_intern_cstr(t, "held-by-a-handle");
    assert_ptr_equal(atab_external_acquire(t, a), a);
    assert_ptr_equal(atab_external_acquire(t, b), b);
    assert_int_equal(atab_release(t, a), ATAB_OK);   /* kept as a spare here */
    assert_int_equal(atab_external_release(t, a), ATAB_OK);
    assert_int_equal(atab_external_release(t, a), ATAB_EREFS);   /* a's spare only */
    assert_int_equal(atab_last_error(), ATAB_EREFS);
    assert_int_equal(atab_external_handles(t), 1);   /* b's */
    atab_stats st;
    atab_get_stats(t, &st);
    assert_int_equal(st.misuse, 1);
    assert_int_equal(atab_release(t, b), ATAB_OK);
    assert_int_equal(atab_external_release(t, b), ATAB_OK);
    assert_int_equal(atab_external_handles(t), 0);
    assert_int_equal(atab_gc(t), 2);
    atab_table_free(t);
}

/* A handle given back to another table than the one it was taken on (a
** finalizer handed the wrong table as its hint): refused with ATAB_EINVAL,
** as atab_release refuses another table's atom, and nothing touched. Before,
** it dropped the atom's reference and the other table's handle count: the
** atom's own handle then held no reference (its interner's release left it
** at 0, freed by the next sweep under that handle), and the other table,
** its count of handles out 0 while one still was, freed itself and its
** handled atom at once in atab_table_free. The same table's handle taken on
** another table's atom is refused too (ATAB_EINVAL), so that no handle is
** taken that its release would refuse. */
static void a_handle_given_back_to_another_table_is_refused(void **state)
{
    (void)state;
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t1 = plain_table(NULL), *t2 = plain_table(&al);
    const atab_atom *a = atab_intern_cstr(t1, "handled-in-t1");
    const atab_atom *b = atab_intern_cstr(t2, "handled-in-t2");
    assert_ptr_equal(atab_external_acquire(t1, a), a);
    assert_ptr_equal(atab_external_acquire(t2, b), b);
    assert_int_equal(atab_external_release(t2, a), ATAB_EINVAL);
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    assert_int_equal(atab_external_handles(t2), 1);   /* b's, still out */
    assert_int_equal(atab_external_handles(t1), 1);
    assert_null(atab_external_acquire(t2, a));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    assert_int_equal(atab_external_handles(t2), 1);
    atab_stats st;
    atab_get_stats(t2, &st);
    assert_int_equal(st.misuse, 1);
    /* the interners' references go: each handle still holds its atom */
    assert_int_equal(atab_release(t1, a), ATAB_OK);
    assert_int_equal(atab_release(t2, b), ATAB_OK);
    assert_int_equal(atab_gc(t1), 0);
    assert_int_equal(atab_gc(t2), 0);
    assert_ptr_equal(atab_lookup(t1, "handled-in-t1", 13), a);
    assert_int_equal(atab_release(t1, a), ATAB_OK);   /* the lookup's */
    atab_table_free(t2);
    assert_true(c.live > 0);   /* deferred for b's handle */
    assert_string_equal(atab_chars(b), "handled-in-t2");
    assert_int_equal(atab_external_release(t2, b), ATAB_OK);   /* frees t2 */
    assert_int_equal(c.live, 0);
    assert_int_equal(atab_external_release(t1, a), ATAB_OK);
    assert_int_equal(atab_gc(t1), 1);
    atab_table_free(t1);
}

/* A host cache's copy callbacks: the string holds no reference. */
static long copies_made;

static void *copy_create(void *ud, atab_table *t, const atab_atom *a, unsigned *refs)
{
    (void)ud, (void)t;
    *refs = 0;
    copies_made++;
    return strdup(atab_chars(a));
}

static void copy_drop(void *ud, void *s)
{
    (void)ud;
    free(s);
}

/* A host cache refuses another table's atom (ATAB_EINVAL, nothing made or
** taken), as atab_external_acquire does: the cache took a reference on it
** (atab_ref) that its drop gave back to the cache's table, which refuses
** another table's atom, so the atom kept that reference for good, past its
** holders' releases and its own table's sweeps. */
static void a_host_cache_refuses_another_tables_atom(void **state)
{
    (void)state;
    atab_table *t1 = plain_table(NULL), *t2 = plain_table(NULL);
    atab_host_ops ops = {copy_create, NULL, copy_drop, NULL};
    atab_host_cache *c1 = atab_host_cache_new(t1, &ops);
    assert_non_null(c1);
    const atab_atom *b = atab_intern_cstr(t2, "cached-in-t2");
    copies_made = 0;
    void *s = atab_host_cache_get(c1, b);
    if (s) {
        size_t dropped = atab_host_cache_clear(c1);
        atab_status err = atab_last_error();
        assert_int_equal(atab_release(t2, b), ATAB_OK);   /* its only holder's */
        size_t freed = atab_gc(t2);
        fail_msg("another table's atom was cached; the cache dropped %zu entry "
                 "(its release: %d), its holder released it, and atab_gc freed "
                 "%zu atom of its table, not 1", dropped, (int)err, freed);
    }
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    assert_int_equal(copies_made, 0);
    assert_int_equal(atab_host_cache_count(c1), 0);
    assert_int_equal(atab_release(t2, b), ATAB_OK);
    assert_int_equal(atab_gc(t2), 1);   /* nothing kept it */
    const atab_atom *a = atab_intern_cstr(t1, "cached-in-t1");   /* its own table's: */
    assert_non_null(atab_host_cache_get(c1, a));                 /* cached */
    assert_int_equal(copies_made, 1);
    atab_host_cache_free(c1);
    atab_release(t1, a);
    atab_table_free(t2);
    atab_table_free(t1);
}

static void table_free_without_handles_frees_at_once(void **state)
{
    (void)state;
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = plain_table(&al);
    const atab_atom *a = atab_intern_cstr(t, "x");
    atab_external_acquire(t, a);
    atab_external_release(t, a);
    atab_table_free(t);
    assert_int_equal(c.live, 0);
}

typedef struct rel_job {
    atab_table *t;
    const atab_atom **atoms;
    int n;
    pthread_barrier_t *go;
} rel_job;

static void *release_all(void *p)
{
    rel_job *j = p;
    pthread_barrier_wait(j->go);
    for (int i = 0; i < j->n; i++)
        assert_int_equal(atab_external_release(j->t, j->atoms[i]), ATAB_OK);
    return NULL;
}

/* test_util.h's counting allocator behind a mutex, for many threads. */
static pthread_mutex_t ca_lock = PTHREAD_MUTEX_INITIALIZER;
static void *locked_alloc(void *ud, size_t size)
{
    pthread_mutex_lock(&ca_lock);
    void *p = ca_alloc(ud, size);
    pthread_mutex_unlock(&ca_lock);
    return p;
}
static void locked_free(void *ud, void *p, size_t size)
{
    pthread_mutex_lock(&ca_lock);
    ca_free(ud, p, size);
    pthread_mutex_unlock(&ca_lock);
}

static void the_last_of_many_threads_releasing_frees_the_table_once(void **state)
{
    (void)state;
    enum { THREADS = 4, PER = 2000, ROUNDS = 20 };
    for (int round = 0; round < ROUNDS; round++) {
        counting_alloc c = {0};
        atab_allocator al = {locked_alloc, locked_free, ca_usable, &c};
        atab_table *t = plain_table(&al);
        static const atab_atom *atoms[THREADS][PER];
        char buf[32];
        for (int k = 0; k < THREADS; k++) {
            for (int i = 0; i < PER; i++) {
                snprintf(buf, sizeof buf, "id-%d", i % 300);
                atoms[k][i] = atab_intern_cstr(t, buf);
                atab_external_acquire(t, atoms[k][i]);
                atab_release(t, atoms[k][i]);
            }
        }
        pthread_barrier_t go;
        pthread_barrier_init(&go, NULL, THREADS + 1);
        pthread_t th[THREADS];
        rel_job jobs[THREADS];
        for (int k = 0; k < THREADS; k++) {
            jobs[k] = (rel_job){t, atoms[k], PER, &go};
            pthread_create(&th[k], NULL, release_all, &jobs[k]);
        }
        pthread_barrier_wait(&go);
        atab_table_free(t);                    /* races with the releases */
        for (int k = 0; k < THREADS; k++)
            pthread_join(th[k], NULL);
        pthread_barrier_destroy(&go);
        pthread_mutex_lock(&ca_lock);
        assert_int_equal(c.live, 0);
        assert_int_equal(c.size_mismatch, 0);
        pthread_mutex_unlock(&ca_lock);
    }
}

/* ---- the host cache ---- */

static void the_cache_returns_the_same_host_string(void **state)
{
    (void)state;
    host h = {0};
    atab_host_ops ops = host_ops(&h);
    atab_table *t = plain_table(NULL);
    atab_host_cache *hc = atab_host_cache_new(t, &ops);
    assert_non_null(hc);
    const atab_atom *a = atab_intern_cstr(t, "This is a test");
    hstr *s1 = atab_host_cache_get(hc, a);
    hstr *s2 = atab_host_cache_get(hc, a);
    assert_non_null(s1);
    assert_ptr_equal(s1, s2);
    assert_ptr_equal(s1->chars, atab_chars(a));   /* shared, not copied */
    assert_int_equal(h.created, 1);
    assert_int_equal(s1->rc, 3);                   /* cache + two reads */
    assert_null(atab_host_cache_get(hc, NULL));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    assert_int_equal(atab_host_cache_count(hc), 1);
    assert_int_equal(atab_external_handles(t), 1);
    hstr_unref(&h, s1);
    hstr_unref(&h, s2);
    atab_release(t, a);
    atab_table_free(t);                            /* drops the cached string */
    assert_int_equal(h.dropped, 1);
    assert_int_equal(h.finalized, 1);
}

static void trimming_drops_entries_for_otherwise_unused_atoms(void **state)
{
    (void)state;
    cache_fixture f;
    cache_fixture_open(&f);
    const atab_atom *keep = atab_intern_cstr(f.t, "kept");
    const atab_atom *go = atab_intern_cstr(f.t, "gone");
    hstr *held = atab_host_cache_get(f.hc, go);   /* the host holds it */
    hstr_unref(&f.h, atab_host_cache_get(f.hc, keep));
    atab_release(f.t, go);                         /* only the cache's refs left */
    assert_int_equal(atab_gc(f.t), 0);             /* the cache keeps it alive */
    assert_int_equal(atab_host_cache_trim(f.hc), 1);
    assert_int_equal(atab_host_cache_count(f.hc), 1);
    assert_int_equal(f.h.dropped, 1);
    assert_int_equal(f.h.finalized, 0);            /* the host still holds it */
    assert_int_equal(atab_gc(f.t), 0);
    assert_string_equal(held->chars, "gone");
    hstr_unref(&f.h, held);                        /* the host's GC */
    assert_int_equal(f.h.finalized, 1);
    assert_int_equal(atab_gc(f.t), 1);             /* now it can go */
    assert_ptr_equal(atab_host_cache_get(f.hc, keep), atab_host_cache_get(f.hc, keep));
    assert_int_equal(f.h.created, 2);              /* kept: not made again */
    assert_int_equal(atab_host_cache_trim(f.hc), 0);
    hstr *k = atab_host_cache_get(f.hc, keep);
    hstr_unref(&f.h, k), hstr_unref(&f.h, k), hstr_unref(&f.h, k);   /* the 3 reads */
    atab_release(f.t, keep);
    assert_int_equal(atab_host_cache_trim(f.hc), 1);
    assert_int_equal(atab_gc(f.t), 1);
    assert_int_equal(atab_host_cache_count(f.hc), 0);
    cache_fixture_close(&f);
}

static void the_cache_trims_itself_as_it_grows(void **state)
{
    (void)state;
    host h = {0};
    atab_host_ops ops = host_ops(&h);
    atab_table *t = plain_table(NULL);
    atab_host_cache *hc = atab_host_cache_new(t, &ops);
    assert_non_null(hc);
    char buf[32];
    for (int i = 0; i < 20000; i++) {          /* each id read once, then dropped */
        snprintf(buf, sizeof buf, "transient-%d", i);
        const atab_atom *a = atab_intern_cstr(t, buf);
        hstr_unref(&h, atab_host_cache_get(hc, a));
        atab_release(t, a);
        assert_true(atab_host_cache_count(hc) <= 2048);
    }
    assert_true(h.dropped > 18000);
    atab_table_free(t);
    assert_int_equal(h.finalized, h.created);
}

/* A miss whose probe reaches a deleted entry reuses it, and the count of
** deleted entries says so: ids read and trimmed in turn, over and over,
** never make the cache rebuild its array. */
static void ids_trimmed_and_read_again_reuse_their_deleted_entries(void **state)
{
    (void)state;
    cache_fixture f;
    cache_fixture_open(&f);
    const atab_atom *anchor = atab_intern_cstr(f.t, "anchor");
    hstr_unref(&f.h, atab_host_cache_get(f.hc, anchor));
    static const char *const ids[] = {"cycled-0", "cycled-1", "cycled-2"};
    long allocs = 0;
    for (int round = 0; round < 20; round++) {
        if (round == 1)
            allocs = f.c.allocs;   /* the cache's array and the atoms are made */
        for (int i = 0; i < 3; i++) {
            const atab_atom *a = atab_intern_cstr(f.t, ids[i]);   /* revived, not made */
            hstr_unref(&f.h, atab_host_cache_get(f.hc, a));
            atab_release(f.t, a);
        }
        assert_int_equal(atab_host_cache_trim(f.hc), 3);
        assert_int_equal(atab_host_cache_count(f.hc), 1);
    }
    assert_int_equal(f.c.allocs, allocs);   /* no rebuild: 3 deleted entries at most */
    atab_release(f.t, anchor);
    cache_fixture_close(&f);
}

static void the_cache_allocates_nothing_for_atoms_never_shared(void **state)
{
    (void)state;
    cache_fixture f;
    cache_fixture_open(&f);
    const atab_atom *shared = atab_intern_cstr(f.t, "shared");
    hstr_unref(&f.h, atab_host_cache_get(f.hc, shared));
    long allocs = f.c.allocs;
    size_t bytes = f.c.bytes;
    char buf[32];
    const atab_atom *atoms[5000];
    for (int i = 0; i < 5000; i++) {
        snprintf(buf, sizeof buf, "never-shared-%d", i);
        atoms[i] = atab_intern_cstr(f.t, buf);
    }
    size_t atom_bytes = f.c.bytes - bytes;
    long atom_allocs = f.c.allocs - allocs;
    for (int i = 0; i < 100; i++)
        hstr_unref(&f.h, atab_host_cache_get(f.hc, shared));
    assert_int_equal(f.c.allocs - allocs, atom_allocs);   /* hits allocate nothing */
    assert_int_equal(f.c.bytes - bytes, atom_bytes);
    /* the same table without a cache: exactly the same bytes per atom */
    counting_alloc c2 = {0};
    atab_allocator al2 = ca_allocator(&c2);
    atab_table *t2 = plain_table(&al2);
    atab_release(t2, atab_intern_cstr(t2, "shared"));   /* same atoms, same record */
    size_t base2 = c2.bytes;
    for (int i = 0; i < 5000; i++) {
        snprintf(buf, sizeof buf, "never-shared-%d", i);
        atab_intern_cstr(t2, buf);
    }
    assert_int_equal(c2.bytes - base2, atom_bytes);
    atab_table_free(t2);
    for (int i = 0; i < 5000; i++)
        atab_release(f.t, atoms[i]);
    atab_release(f.t, shared);
    cache_fixture_close(&f);
}

static void oom_in_the_cache_is_an_error_and_loses_nothing(void **state)
{
    (void)state;
    cache_fixture f;
    cache_fixture_open(&f);
    const atab_atom *a = atab_intern_cstr(f.t, "first");
    f.c.fail_at = f.c.attempts + 1;   /* the cache's first array */
    assert_null(atab_host_cache_get(f.hc, a));
    assert_int_equal(atab_last_error(), ATAB_ENOMEM);
    assert_int_equal(f.h.created, 0);            /* no host string made */
    assert_int_equal(atab_host_cache_count(f.hc), 0);
    assert_int_equal(atab_external_handles(f.t), 0);
    f.c.fail_at = 0;
    atab_release(f.t, a);
    assert_int_equal(atab_gc(f.t), 1);           /* no reference leaked */
    a = atab_intern_cstr(f.t, "first");
    f.h.fail_create = 1;                         /* the host fails */
    assert_null(atab_host_cache_get(f.hc, a));
    assert_int_equal(atab_last_error(), ATAB_ENOMEM);
    assert_int_equal(atab_host_cache_count(f.hc), 0);
    f.h.fail_create = 0;
    hstr *s = atab_host_cache_get(f.hc, a);   /* works again */
    assert_non_null(s);
    /* fill to the growth point (16 slots, load 1/2), then fail the growth */
    const atab_atom *more[8];
    char buf[16];
    for (int i = 0; i < 7; i++) {
        snprintf(buf, sizeof buf, "m%d", i);
        more[i] = atab_intern_cstr(f.t, buf);
        hstr_unref(&f.h, atab_host_cache_get(f.hc, more[i]));
    }
    assert_int_equal(atab_host_cache_count(f.hc), 8);
    more[7] = atab_intern_cstr(f.t, "m7");
    long created = f.h.created;
    f.c.fail_at = f.c.attempts + 1;
    f.c.fail_after = 1;
    void *r = atab_host_cache_get(f.hc, more[7]);   /* benign: 16 > 9 + 1 */
    f.c.fail_at = 0;
    f.c.fail_after = 0;
    assert_non_null(r);
    hstr_unref(&f.h, r);
    assert_int_equal(f.h.created, created + 1);
    for (int i = 0; i < 8; i++)   /* every entry still found */
        hstr_unref(&f.h, atab_host_cache_get(f.hc, more[i]));
    assert_int_equal(f.h.created, created + 1);
    for (int i = 0; i < 8; i++)
        atab_release(f.t, more[i]);
    hstr_unref(&f.h, s);
    atab_release(f.t, a);
    cache_fixture_close(&f);
    assert_int_equal(f.h.finalized, f.h.created);
}

static void oom_when_the_cache_cannot_grow_at_all(void **state)
{
    (void)state;
    cache_fixture f;
    cache_fixture_open(&f);
    enum { N = 16 };
    const atab_atom *atoms[N];
    char buf[16];
    int failed_at = -1;
    f.c.fail_at = 0;
    for (int i = 0; i < N; i++) {
        snprintf(buf, sizeof buf, "k%d", i);
        atoms[i] = atab_intern_cstr(f.t, buf);
    }
    f.c.fail_at = f.c.attempts + 2;   /* the first array works, growth fails */
    f.c.fail_after = 1;
    for (int i = 0; i < N && failed_at < 0; i++) {
        void *s = atab_host_cache_get(f.hc, atoms[i]);
        if (!s) {
            failed_at = i;
            assert_int_equal(atab_last_error(), ATAB_ENOMEM);
        } else {
            hstr_unref(&f.h, s);
        }
    }
    f.c.fail_at = 0;
    f.c.fail_after = 0;
    assert_true(failed_at > 8);                    /* benign while it could */
    assert_int_equal(atab_host_cache_count(f.hc), failed_at);
    assert_int_equal(f.h.created, failed_at);
    for (int i = 0; i < failed_at; i++) {          /* all still there */
        hstr *s = atab_host_cache_get(f.hc, atoms[i]);
        assert_string_equal(s->chars, atab_chars(atoms[i]));
        hstr_unref(&f.h, s);
    }
    assert_int_equal(f.h.created, failed_at);
    for (int i = 0; i < N; i++)
        atab_release(f.t, atoms[i]);
    cache_fixture_close(&f);
}

static void freeing_the_table_drops_the_cache_and_waits_for_the_strings(void **state)
{
    (void)state;
    cache_fixture f;
    cache_fixture_open(&f);
    const atab_atom *a = atab_intern_cstr(f.t, "still-read-by-the-host");
    hstr *s = atab_host_cache_get(f.hc, a);   /* the host keeps this one */
    atab_release(f.t, a);
    atab_table_free(f.t);
    assert_int_equal(f.h.dropped, 1);
    assert_true(f.c.live > 0);
    assert_string_equal(s->chars, "still-read-by-the-host");
    hstr_unref(&f.h, s);                       /* its finalizer frees the table */
    assert_int_equal(f.c.live, 0);
}

/* ---- several caches on one table (one per host heap) ---- */

static void each_cache_makes_its_own_string_for_a_shared_atom(void **state)
{
    (void)state;
    host h1 = {0}, h2 = {0};
    atab_host_ops o1 = host_ops(&h1), o2 = host_ops(&h2);
    atab_table *t = plain_table(NULL);
    atab_host_cache *c1 = atab_host_cache_new(t, &o1), *c2 = atab_host_cache_new(t, &o2);
    assert_non_null(c1);
    assert_non_null(c2);
    assert_ptr_not_equal(c1, c2);
    const atab_atom *a = atab_intern_cstr(t, "one-atom-two-heaps");
    hstr *s1 = atab_host_cache_get(c1, a), *s2 = atab_host_cache_get(c2, a);
    assert_ptr_not_equal(s1, s2);                      /* a string per heap */
    assert_ptr_equal(s1->chars, s2->chars);            /* one copy of the chars */
    assert_ptr_equal(atab_host_cache_get(c1, a), s1);  /* and one per heap only */
    assert_ptr_equal(atab_host_cache_get(c2, a), s2);
    assert_int_equal(h1.created, 1);
    assert_int_equal(h2.created, 1);
    assert_int_equal(atab_host_cache_count(c1), 1);
    assert_int_equal(atab_host_cache_count(c2), 1);
    assert_int_equal(atab_external_handles(t), 2);
    for (int i = 0; i < 2; i++)
        hstr_unref(&h1, s1), hstr_unref(&h2, s2);
    atab_release(t, a);
    atab_host_cache_free(c1);                          /* c2 goes on alone */
    assert_int_equal(h1.dropped, 1);
    assert_int_equal(h1.finalized, 1);
    hstr *again = atab_host_cache_get(c2, a);          /* the atom lives on */
    assert_ptr_equal(again, s2);
    hstr_unref(&h2, again);
    atab_host_cache_free(c2);
    assert_int_equal(h2.finalized, 1);
    assert_int_equal(atab_gc(t), 1);                   /* nothing else held it */
    atab_table_free(t);
}

static void an_atom_only_caches_hold_is_trimmed_from_every_cache(void **state)
{
    (void)state;
    host h1 = {0}, h2 = {0};
    atab_host_ops o1 = host_ops(&h1), o2 = host_ops(&h2);
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = plain_table(&al);
    atab_host_cache *c1 = atab_host_cache_new(t, &o1), *c2 = atab_host_cache_new(t, &o2);
    const atab_atom *shared = atab_intern_cstr(t, "in-both-caches");
    const atab_atom *used = atab_intern_cstr(t, "still-used");
    hstr_unref(&h1, atab_host_cache_get(c1, shared));
    hstr_unref(&h2, atab_host_cache_get(c2, shared));
    hstr_unref(&h1, atab_host_cache_get(c1, used));
    hstr_unref(&h2, atab_host_cache_get(c2, used));
    atab_release(t, shared);                           /* only the caches hold it */
    assert_int_equal(atab_gc(t), 0);
    assert_int_equal(atab_host_cache_trim(c1), 1);     /* not `used`: held */
    assert_int_equal(atab_host_cache_count(c1), 1);
    assert_int_equal(atab_gc(t), 0);                   /* c2 still holds it */
    assert_int_equal(atab_host_cache_trim(c2), 1);
    assert_int_equal(atab_host_cache_count(c2), 1);
    assert_int_equal(atab_gc(t), 1);                   /* both strings are gone */
    assert_null(atab_lookup(t, "in-both-caches", 14));
    atab_release(t, used);                             /* now only caches hold it */
    assert_int_equal(atab_host_cache_trim(c2), 1);
    assert_int_equal(atab_host_cache_trim(c1), 1);
    assert_int_equal(atab_gc(t), 1);
    atab_host_cache_free(c2);
    atab_host_cache_free(c1);
    atab_table_free(t);
    assert_int_equal(c.live, 0);
    assert_int_equal(h1.finalized, h1.created);
    assert_int_equal(h2.finalized, h2.created);
}

static void the_report_counts_every_cache_s_memory(void **state)
{
    (void)state;
    host h[3] = {{0}};
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);   /* usable == requested */
    atab_table *t = plain_table(&al);
    atab_host_cache *caches[3];
    int64_t before = -1;
    char buf[32];
    for (int k = 0; k < 3; k++) {
        atab_host_ops ops = host_ops(&h[k]);
        caches[k] = atab_host_cache_new(t, &ops);
        for (int i = 0; i < 100 * (k + 1); i++) {   /* different sizes */
            snprintf(buf, sizeof buf, "reported-%d", i);
            const atab_atom *a = atab_intern_cstr(t, buf);
            hstr_unref(&h[k], atab_host_cache_get(caches[k], a));
            atab_release(t, a);
        }
        heap_sum = 0;
        assert_int_equal(atab_report(t, sum_heap, NULL), ATAB_OK);
        assert_int_equal(heap_sum, (int64_t)c.bytes);   /* every block counted */
        assert_true(heap_sum > before);
        before = heap_sum;
    }
    atab_host_cache_free(caches[1]);
    heap_sum = 0;
    atab_report(t, sum_heap, NULL);
    assert_int_equal(heap_sum, (int64_t)c.bytes);
    atab_table_free(t);                                 /* frees caches 0 and 2 */
    assert_int_equal(c.live, 0);
    for (int k = 0; k < 3; k++)
        assert_int_equal(h[k].finalized, h[k].created);
}

static void a_cache_that_cannot_be_allocated_is_an_error_and_leaks_nothing(void **state)
{
    (void)state;
    host h = {0};
    atab_host_ops ops = host_ops(&h);
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = plain_table(&al);
    long live = c.live;
    c.fail_at = c.attempts + 1;                       /* the table's list of caches */
    assert_null(atab_host_cache_new(t, &ops));
    assert_int_equal(atab_last_error(), ATAB_ENOMEM);
    assert_int_equal(c.live, live);
    c.fail_at = c.attempts + 2;                       /* the list works, the cache fails */
    assert_null(atab_host_cache_new(t, &ops));
    assert_int_equal(atab_last_error(), ATAB_ENOMEM);
    c.fail_at = 0;
    atab_host_cache *hc = atab_host_cache_new(t, &ops);   /* works, on the kept list */
    assert_non_null(hc);
    const atab_atom *a = atab_intern_cstr(t, "after-oom");
    hstr_unref(&h, atab_host_cache_get(hc, a));
    atab_release(t, a);
    atab_host_cache_free(hc);
    atab_table_free(t);
    assert_int_equal(c.live, 0);
    assert_int_equal(h.finalized, h.created);
}

/* One host heap per thread, as Node's workers: its own cache over the one
** table, the same ids in every thread, trims, a cache freed and made again
** while the others run, and a reporter thread throughout. */
typedef struct heap_job {
    atab_table *t;
    host h;
    pthread_barrier_t *go;
} heap_job;

static void *heap_thread(void *p)
{
    heap_job *j = p;
    atab_host_ops ops = host_ops(&j->h);
    atab_host_cache *hc = atab_host_cache_new(j->t, &ops);
    assert_non_null(hc);
    pthread_barrier_wait(j->go);
    char buf[32];
    for (int i = 0; i < 6000; i++) {
        snprintf(buf, sizeof buf, "heap-id-%d", i % 1500);
        const atab_atom *a = atab_intern_cstr(j->t, buf);
        hstr *s = atab_host_cache_get(hc, a);
        assert_non_null(s);
        assert_string_equal(s->chars, buf);
        hstr_unref(&j->h, s);
        atab_release(j->t, a);
        if (i % 997 == 0)
            atab_host_cache_trim(hc);
        if (i == 3000) {                               /* a worker restarts */
            atab_host_cache_free(hc);
            hc = atab_host_cache_new(j->t, &ops);
            assert_non_null(hc);
        }
    }
    atab_host_cache_free(hc);
    return NULL;
}

static void caches_on_several_threads_share_one_table(void **state)
{
    (void)state;
    enum { THREADS = 4 };
    counting_alloc c = {0};
    atab_allocator al = {locked_alloc, locked_free, ca_usable, &c};
    atab_table *t = plain_table(&al);
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, THREADS + 1);
    heap_job jobs[THREADS];
    pthread_t th[THREADS], rep;
    for (int k = 0; k < THREADS; k++) {
        jobs[k] = (heap_job){t, {0}, &go};
        pthread_create(&th[k], NULL, heap_thread, &jobs[k]);
    }
    pthread_barrier_wait(&go);
    pthread_create(&rep, NULL, report_loop, t);
    for (int k = 0; k < THREADS; k++)
        pthread_join(th[k], NULL);
    pthread_join(rep, NULL);
    pthread_barrier_destroy(&go);
    for (int k = 0; k < THREADS; k++)
        assert_int_equal(jobs[k].h.finalized, jobs[k].h.created);
    assert_int_equal(atab_external_handles(t), 0);
    assert_true(atab_count(t) <= 1500);                /* one atom per id */
    atab_gc(t);
    assert_int_equal(atab_count(t), 0);                /* no reference leaked */
    atab_table_free(t);
    pthread_mutex_lock(&ca_lock);
    assert_int_equal(c.live, 0);
    pthread_mutex_unlock(&ca_lock);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_handle_keeps_its_atom_alive_across_sweeps),
        cmocka_unit_test(releasing_a_handle_never_frees_an_atom_others_hold),
        cmocka_unit_test(the_report_counts_outstanding_handles),
        cmocka_unit_test(the_report_counts_the_host_cache_s_memory),
        cmocka_unit_test(reports_from_another_thread_while_the_cache_grows),
        cmocka_unit_test(static_atoms_take_no_reference_and_no_handle),
        cmocka_unit_test(finalizer_adapters_release_the_handle_from_the_chars),
        cmocka_unit_test(bad_arguments_are_einval),
        cmocka_unit_test(table_free_with_handles_out_defers_until_the_last_release),
        cmocka_unit_test(a_release_with_no_handle_out_is_refused),
        cmocka_unit_test(a_release_too_many_is_refused_with_this_thread_s_spares),
        cmocka_unit_test(a_handle_given_back_to_another_table_is_refused),
        cmocka_unit_test(a_host_cache_refuses_another_tables_atom),
        cmocka_unit_test(table_free_without_handles_frees_at_once),
        cmocka_unit_test(the_last_of_many_threads_releasing_frees_the_table_once),
        cmocka_unit_test(the_cache_returns_the_same_host_string),
        cmocka_unit_test(trimming_drops_entries_for_otherwise_unused_atoms),
        cmocka_unit_test(the_cache_trims_itself_as_it_grows),
        cmocka_unit_test(ids_trimmed_and_read_again_reuse_their_deleted_entries),
        cmocka_unit_test(the_cache_allocates_nothing_for_atoms_never_shared),
        cmocka_unit_test(oom_in_the_cache_is_an_error_and_loses_nothing),
        cmocka_unit_test(oom_when_the_cache_cannot_grow_at_all),
        cmocka_unit_test(freeing_the_table_drops_the_cache_and_waits_for_the_strings),
        cmocka_unit_test(each_cache_makes_its_own_string_for_a_shared_atom),
        cmocka_unit_test(an_atom_only_caches_hold_is_trimmed_from_every_cache),
        cmocka_unit_test(the_report_counts_every_cache_s_memory),
        cmocka_unit_test(a_cache_that_cannot_be_allocated_is_an_error_and_leaks_nothing),
        cmocka_unit_test(caches_on_several_threads_share_one_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
