/* SPDX-License-Identifier: MIT */
/*
** test_static.c - static atom sets: every entry point returns the set's
** atom and never a dynamic twin, ATAB_ATOM() names the same pointers,
** ref/release/gc leave static atoms alone, host sets with and without the
** default set, overlapping sets (first registered wins), bad sets, memory
** failures, the reporter's numbers, concurrent first lookups.
*/
#include <pthread.h>

#include "test_util.h"
#include "atab_int.h"
#include "atomtab_atoms.h"
/* The host sets, generated from test/host.atoms and test/host2.atoms. */
#include "test_host_atoms.c"
#include "test_host2_atoms.c"

/* ---- helpers ---- */

static atab_table *table_with(const atab_static_set *const *sets, size_t n,
                              unsigned flags, const atab_allocator *al)
{
    atab_options o;
    memset(&o, 0, sizeof o);
    o.flags = flags;
    o.static_sets = sets;
    o.n_static_sets = n;
    o.allocator = al;
    return atab_table_new(&o);
}

/* The i-th atom of a set walks the atoms back to back (the generator's
** layout: header, chars, NUL, padding to 4). */
static const atab_atom *next_atom(const atab_atom *a)
{
    size_t sz = sizeof(atab_atom) + ((atab_len(a) + 1 + 3) & ~(size_t)3);
    return (const atab_atom *)(const void *)((const char *)a + sz);
}

/* Checks that every atom of `set` comes back from every entry point, twice
** (the first a miss that finds and caches it, the second a hit). */
static void check_every_atom(atab_table *t, const atab_static_set *set)
{
    uint16_t u[ATAB_STATIC_MAXLEN];
    const atab_atom *a = set->atoms;
    for (uint32_t i = 0; i < set->n; i++, a = next_atom(a)) {
        const char *s = atab_chars(a);
        size_t len = atab_len(a), n16 = u8_to_u16(s, len, u);
        assert_true(atab_is_static(a));
        assert_int_equal(s[len], '\0');
        assert_ptr_equal(atab_lookup(t, s, len), a);   /* before any intern */
        assert_ptr_equal(atab_intern(t, s, len), a);
        assert_ptr_equal(atab_intern(t, s, len), a);
        assert_ptr_equal(atab_intern_utf16(t, u, n16), a);
        assert_ptr_equal(atab_lookup_utf16(t, u, n16), a);
    }
}

/* ---- the default set ---- */

static void every_default_atom_comes_back_from_every_entry_point(void **state)
{
    (void)state;
    atab_table *t = atab_table_new(NULL);
    assert_non_null(t);
    check_every_atom(t, &atab_static_default);
    assert_int_equal(atab_count(t), 0);   /* no dynamic twin was made */
    atab_stats st;
    assert_int_equal(atab_get_stats(t, &st), ATAB_OK);
    assert_int_equal(st.atoms, 0);
    assert_int_equal(st.statics_seen, atab_static_default.n);
    atab_table_free(t);
}

/* Compile-time pointers: a static table of them is a constant initializer. */
static const atab_atom *const some_atoms[] = {
    ATAB_ATOM(div), ATAB_ATOM(span), ATAB_ATOM(accept_charset), ATAB_ATOM(empty),
    ATAB_ATOM(viewBox), ATAB_ATOM(viewbox), ATAB_ATOM(xlink_href), ATAB_ATOM(for),
    ATAB_ATOM(background_color), ATAB_ATOM(aria_hidden), ATAB_ATOM(addEventListener),
};
static const char *const some_names[] = {
    "div", "span", "accept-charset", "", "viewBox", "viewbox", "xlink:href", "for",
    "background-color", "aria-hidden", "addEventListener",
};

static void atab_atom_pointers_equal_what_the_table_returns(void **state)
{
    (void)state;
    atab_table *t1 = atab_table_new(NULL), *t2 = atab_table_new(NULL);
    for (size_t i = 0; i < sizeof some_names / sizeof *some_names; i++) {
        const atab_atom *a = some_atoms[i];
        assert_string_equal(atab_chars(a), some_names[i]);
        assert_ptr_equal(atab_intern_cstr(t1, some_names[i]), a);
        assert_ptr_equal(atab_lookup(t2, some_names[i], strlen(some_names[i])), a);
        assert_ptr_equal(atab_intern_cstr(t2, some_names[i]), a);   /* every table */
    }
    const atab_atom *d = atab_intern_cstr(t1, "div");
    assert_true(d == ATAB_ATOM(div) && d != ATAB_ATOM(span));   /* compare by pointer */
    assert_true(ATAB_ATOM_COUNT == atab_static_default.n);
    atab_table_free(t1);
    atab_table_free(t2);
}

static void tables_without_the_default_set_make_dynamic_atoms(void **state)
{
    (void)state;
    atab_table *t = plain_table(NULL);
    const atab_atom *a = atab_intern_cstr(t, "div");
    assert_non_null(a);
    assert_false(atab_is_static(a));
    assert_ptr_not_equal(a, ATAB_ATOM(div));
    assert_int_equal(atab_count(t), 1);
    atab_release(t, a);
    atab_table_free(t);
}

static void strings_outside_the_sets_stay_dynamic(void **state)
{
    (void)state;
    atab_table *t = atab_table_new(NULL);
    const char *names[] = {"divv", "di", "DIV", "hljs-title", "div ", "x-unknown"};
    for (size_t i = 0; i < 6; i++) {
        assert_null(atab_lookup(t, names[i], strlen(names[i])));
        const atab_atom *a = atab_intern_cstr(t, names[i]);
        assert_false(atab_is_static(a));
        atab_release(t, a);
    }
    char big[400];
    memset(big, 'd', sizeof big);   /* longer than any static atom */
    const atab_atom *a = atab_intern(t, big, sizeof big);
    assert_false(atab_is_static(a));
    atab_release(t, a);
    atab_table_free(t);
}

/* ---- reference counting leaves static atoms alone ---- */

static void ref_release_and_gc_do_nothing_to_static_atoms(void **state)
{
    (void)state;
    atab_table *t = atab_table_new(NULL);
    const atab_atom *a = atab_intern_cstr(t, "div");
    assert_ptr_equal(a, ATAB_ATOM(div));
    for (int i = 0; i < 1000; i++)
        assert_ptr_equal(atab_ref(a), a);
    assert_int_equal(a->atab__refcnt, 0);
    for (int i = 0; i < 5000; i++)   /* far more releases than references */
        assert_int_equal(atab_release(t, a), ATAB_OK);
    assert_int_equal(atab_last_error(), ATAB_OK);
    assert_int_equal(atab_gc(t), 0);
    assert_int_equal(a->atab__refcnt, 0);
    assert_ptr_equal(atab_intern_cstr(t, "div"), a);
    atab_stats st;
    atab_get_stats(t, &st);
    assert_int_equal(st.atoms, 0);
    assert_int_equal(st.misuse, 0);
    /* a static atom released on a table that never saw it: still a no-op */
    atab_table *p = plain_table(NULL);
    assert_int_equal(atab_release(p, ATAB_ATOM(span)), ATAB_OK);
    atab_table_free(p);
    atab_table_free(t);
}

static void sweeps_keep_cached_static_atoms(void **state)
{
    (void)state;
    atab_options o;
    memset(&o, 0, sizeof o);
    o.sweep_threshold = 8;
    atab_table *t = atab_table_new(&o);
    char buf[32];
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < 50; i++) {   /* dynamic churn: triggers sweeps */
            int n = snprintf(buf, sizeof buf, "dyn-%d-%d", round, i);
            atab_release(t, atab_intern(t, buf, (size_t)n));
        }
        assert_ptr_equal(atab_intern_cstr(t, "table"), ATAB_ATOM(table));
        atab_release(t, ATAB_ATOM(table));
    }
    atab_gc(t);
    assert_int_equal(atab_count(t), 0);
    assert_ptr_equal(atab_lookup(t, "table", 5), ATAB_ATOM(table));
    atab_table_free(t);
}

/* ---- host sets ---- */

static void host_set_atoms_come_back_with_and_without_the_default_set(void **state)
{
    (void)state;
    const atab_static_set *sets[] = {&test_host_set};
    for (int with_default = 0; with_default < 2; with_default++) {
        unsigned flags = with_default ? 0 : ATAB_NO_DEFAULT_STATICS;
        atab_table *t = table_with(sets, 1, flags, NULL);
        assert_non_null(t);
        assert_ptr_equal(atab_intern_cstr(t, "my-widget"), TEST_HOST_SET_ATOM(my_widget));
        assert_ptr_equal(atab_intern_cstr(t, "hello world"), TEST_HOST_SET_ATOM(hello_world));
        assert_ptr_equal(atab_intern_cstr(t, "caf\xc3\xa9"), TEST_HOST_SET_ATOM(cafe));
        assert_ptr_equal(atab_intern_cstr(t, "zeta"), TEST_HOST_SET_ATOM(zeta));
        /* "div" is in both: the default set is registered first and wins */
        const atab_atom *div = atab_intern_cstr(t, "div");
        assert_ptr_equal(div, with_default ? ATAB_ATOM(div) : TEST_HOST_SET_ATOM(div));
        assert_ptr_equal(atab_intern(t, "", 0),
                         with_default ? ATAB_ATOM(empty) : TEST_HOST_SET_ATOM(empty));
        /* default-only strings: static with the default set, else dynamic */
        const atab_atom *span = atab_intern_cstr(t, "span");
        assert_int_equal(atab_is_static(span), with_default);
        atab_release(t, span);
        if (with_default) {
            assert_int_equal(atab_count(t), 0);
        } else {
            check_every_atom(t, &test_host_set);
            assert_int_equal(atab_count(t), 1);   /* span */
        }
        atab_table_free(t);
    }
}

static void long_and_non_ascii_host_atoms_are_found_through_utf16(void **state)
{
    (void)state;
    const atab_static_set *sets[] = {&test_host_set};
    atab_table *t = table_with(sets, 1, 0, NULL);
    uint16_t u[300];
    const atab_atom *l = TEST_HOST_SET_ATOM(long200);
    assert_int_equal(atab_len(l), 200);
    assert_int_equal(test_host_set.maxlen, 200);
    for (int i = 0; i < 200; i++)
        u[i] = 'x';
    assert_ptr_equal(atab_lookup_utf16(t, u, 200), l);
    assert_ptr_equal(atab_intern_utf16(t, u, 200), l);
    for (int i = 200; i < 300; i++)   /* longer: the chunked UTF-16 path */
        u[i] = 'x';
    const atab_atom *d = atab_intern_utf16(t, u, 300);
    assert_false(atab_is_static(d));
    atab_release(t, d);
    assert_false(atab_is_ascii(TEST_HOST_SET_ATOM(euro)));
    assert_true(atab_is_ascii(TEST_HOST_SET_ATOM(zeta)));
    u[0] = 0x20ac;
    assert_ptr_equal(atab_intern_utf16(t, u, 1), TEST_HOST_SET_ATOM(euro));
    /* bytes C would escape (and a trigraph) survive generation */
    assert_string_equal(atab_chars(TEST_HOST_SET_ATOM(back_q)), "a\\b?\?=");
    assert_string_equal(atab_chars(TEST_HOST_SET_ATOM(say_hi)), "say\"hi\"");
    atab_table_free(t);
}

static void overlapping_host_sets_first_registered_wins(void **state)
{
    (void)state;
    const atab_static_set *ab[] = {&test_host_set, &test_host2_set};
    const atab_static_set *ba[] = {&test_host2_set, &test_host_set};
    atab_table *t1 = table_with(ab, 2, ATAB_NO_DEFAULT_STATICS, NULL);
    atab_table *t2 = table_with(ba, 2, ATAB_NO_DEFAULT_STATICS, NULL);
    assert_ptr_equal(atab_intern_cstr(t1, "my-widget"), TEST_HOST_SET_ATOM(my_widget));
    assert_ptr_equal(atab_intern_cstr(t2, "my-widget"), HOST2(my_widget));
    assert_ptr_not_equal(TEST_HOST_SET_ATOM(my_widget), HOST2(my_widget));
    assert_ptr_equal(atab_intern_cstr(t1, "only-in-two"), HOST2(only_in_two));
    assert_ptr_equal(atab_intern_cstr(t2, "zeta"), TEST_HOST_SET_ATOM(zeta));
    assert_int_equal(atab_count(t1) + atab_count(t2), 0);
    atab_table_free(t1);
    atab_table_free(t2);
}

static void bad_sets_are_refused(void **state)
{
    (void)state;
    atab_static_set wrong = test_host_set;
    const atab_static_set *null_set[] = {NULL};
    const atab_static_set *bad[] = {&test_host_set, &wrong};
    wrong.abi = ATAB_STATIC_ABI + 1;
    assert_null(table_with(null_set, 1, 0, NULL));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    assert_null(table_with(bad, 2, 0, NULL));
    assert_int_equal(atab_last_error(), ATAB_EABI);   /* its own code: test_compat */
    wrong = test_host_set;
    wrong.maxlen = ATAB_STATIC_MAXLEN + 1;
    assert_null(table_with(bad, 2, 0, NULL));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    /* counts past the arrays the set's bytes hold: refused, never read */
    wrong = test_host_set;
    wrong.n_slots = test_host_set.n_slots + test_host_set.bytes / 4;
    assert_null(table_with(bad, 2, 0, NULL));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    wrong = test_host_set;
    wrong.n_buckets = test_host_set.n_buckets + test_host_set.bytes / 4;
    assert_null(table_with(bad, 2, 0, NULL));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    wrong = test_host_set;
    wrong.filter_log2 = 31;
    assert_null(table_with(bad, 2, 0, NULL));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    wrong = test_host_set;
    wrong.n_slots = test_host_set.n - 1;   /* fewer slots than atoms */
    assert_null(table_with(bad, 2, 0, NULL));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    assert_null(table_with(NULL, 1, 0, NULL));   /* n without the array */
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    atab_table *t = table_with(NULL, 0, 0, NULL);   /* none: fine */
    assert_non_null(t);
    atab_table_free(t);
}

/* ---- memory ---- */

static void out_of_memory_while_registering_leaves_nothing(void **state)
{
    (void)state;
    const atab_static_set *sets[] = {&test_host_set, &test_host2_set};
    for (long n = 1;; n++) {
        counting_alloc c = {0};
        atab_allocator al = ca_allocator(&c);
        c.fail_at = n;
        atab_table *t = table_with(sets, 2, 0, &al);
        if (t) {
            assert_ptr_equal(atab_intern_cstr(t, "only-in-two"), HOST2(only_in_two));
            atab_table_free(t);
            assert_int_equal(c.live, 0);
            break;
        }
        assert_int_equal(atab_last_error(), ATAB_ENOMEM);
        assert_int_equal(c.live, 0);
        assert_false(c.size_mismatch);
    }
}

static void failing_to_cache_a_static_atom_is_benign(void **state)
{
    (void)state;
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = table_with(NULL, 0, 0, &al);
    c.fail_at = c.attempts + 1;   /* every allocation from now on fails */
    c.fail_after = 1;
    assert_null(atab_intern_cstr(NULL, "x"));   /* a known last error */
    assert_ptr_equal(atab_intern_cstr(t, "div"), ATAB_ATOM(div));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);   /* success leaves it */
    assert_ptr_equal(atab_lookup(t, "li", 2), ATAB_ATOM(li));
    assert_null(atab_intern_cstr(t, "not-static"));   /* a dynamic one fails */
    assert_int_equal(atab_last_error(), ATAB_ENOMEM);
    c.fail_at = 0;
    atab_table_free(t);
    assert_int_equal(c.live, 0);
}

/* Registering sets allocates nothing per atom: the default set alone adds
** no allocation at all, host sets one block (the list of sets). */
static void registering_sets_allocates_no_block_per_atom(void **state)
{
    (void)state;
    const atab_static_set *sets[] = {&test_host_set, &test_host2_set};
    struct { size_t n; unsigned flags; long extra; } cases[] = {
        {0, ATAB_NO_DEFAULT_STATICS, 0}, {0, 0, 0}, {2, ATAB_NO_DEFAULT_STATICS, 1}, {2, 0, 1},
    };
    long base = -1;
    size_t base_bytes = 0;
    for (size_t i = 0; i < 4; i++) {
        counting_alloc c = {0};
        atab_allocator al = ca_allocator(&c);
        atab_table *t = table_with(sets, cases[i].n, cases[i].flags, &al);
        assert_non_null(t);
        if (base < 0)
            base = c.allocs, base_bytes = c.bytes;
        assert_int_equal(c.allocs, base + cases[i].extra);
        assert_int_equal(c.bytes, base_bytes + (cases[i].extra ? (cases[i].n + !cases[i].flags)
                                                * sizeof(void *) : 0));
        atab_table_free(t);
    }
}

/* ---- the reporter ---- */

typedef struct rep {
    int64_t statics, static_data, heap;
    int static_kind, data_kind, data_units;
} rep;

static int rep_cb(void *ud, const char *path, int kind, int units, int64_t amount,
                  const char *desc)
{
    rep *r = ud;
    (void)desc;
    if (strcmp(path, "atoms-static") == 0)
        r->statics = amount, r->static_kind = kind;
    else if (strcmp(path, "atoms-static-data") == 0)
        r->static_data = amount, r->data_kind = kind, r->data_units = units;
    if (kind == ATAB_KIND_HEAP)
        r->heap += amount;
    return 0;
}

static void reporter_counts_the_registered_sets(void **state)
{
    (void)state;
    const atab_static_set *sets[] = {&test_host_set, &test_host2_set, &test_host_set};
    struct { size_t n; unsigned flags; int64_t count, bytes; } cases[] = {
        {0, 0, atab_static_default.n, atab_static_default.bytes},
        {0, ATAB_NO_DEFAULT_STATICS, 0, 0},
        {1, ATAB_NO_DEFAULT_STATICS, test_host_set.n, test_host_set.bytes},
        {3, 0, (int64_t)atab_static_default.n + test_host_set.n + test_host2_set.n,
         (int64_t)atab_static_default.bytes + test_host_set.bytes + test_host2_set.bytes},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        counting_alloc c = {0};
        atab_allocator al = ca_allocator(&c);
        atab_table *t = table_with(sets, cases[i].n, cases[i].flags, &al);
        rep r;
        memset(&r, 0, sizeof r);
        atab_intern_cstr(t, "div");
        atab_intern_cstr(t, "zeta");
        assert_int_equal(atab_report(t, rep_cb, &r), ATAB_OK);
        assert_int_equal(r.statics, cases[i].count);
        assert_int_equal(r.static_data, cases[i].bytes);
        assert_int_equal(r.static_kind, ATAB_KIND_OTHER);
        assert_int_equal(r.data_kind, ATAB_KIND_NONHEAP);
        assert_int_equal(r.data_units, ATAB_UNITS_BYTES);
        assert_int_equal(r.heap, (int64_t)c.bytes);   /* the sets' list included */
        atab_table_free(t);
    }
    /* the default set named again among the options' sets counts once */
    const atab_static_set *again[] = {&atab_static_default, &test_host2_set};
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = table_with(again, 2, 0, &al);
    rep r;
    memset(&r, 0, sizeof r);
    assert_int_equal(atab_report(t, rep_cb, &r), ATAB_OK);
    assert_int_equal(r.statics, (int64_t)atab_static_default.n + test_host2_set.n);
    assert_int_equal(r.heap, (int64_t)c.bytes);
    assert_ptr_equal(atab_intern_cstr(t, "only-in-two"), HOST2(only_in_two));
    atab_table_free(t);
    /* the default set's bytes: its atoms and its index, nothing less */
    assert_true(atab_static_default.bytes >
                atab_static_default.n * (sizeof(atab_atom) + 2 * sizeof(uint32_t)));
}

/* ---- threads ---- */

typedef struct race {
    atab_table *t;
    pthread_barrier_t *go;
    const atab_atom *got[64];
} race;

static const char *const race_names[] = {"div", "span", "a", "class", "href", "li"};

static void *racer(void *arg)
{
    race *r = arg;
    pthread_barrier_wait(r->go);
    for (int i = 0; i < 64; i++) {
        const char *s = race_names[i % 6];
        r->got[i] = i % 2 ? atab_intern_cstr(r->t, s) : atab_lookup(r->t, s, strlen(s));
    }
    return NULL;
}

static void concurrent_first_lookups_agree(void **state)
{
    (void)state;
    for (int round = 0; round < 20; round++) {
        atab_table *t = atab_table_new(NULL);
        pthread_barrier_t go;
        pthread_t th[4];
        race r[4];
        pthread_barrier_init(&go, NULL, 4);
        for (int i = 0; i < 4; i++) {
            r[i].t = t, r[i].go = &go;
            pthread_create(&th[i], NULL, racer, &r[i]);
        }
        for (int i = 0; i < 4; i++)
            pthread_join(th[i], NULL);
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 64; j++)
                assert_ptr_equal(r[i].got[j], atab_intern_cstr(t, race_names[j % 6]));
        assert_int_equal(atab_count(t), 0);
        pthread_barrier_destroy(&go);
        atab_table_free(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_default_atom_comes_back_from_every_entry_point),
        cmocka_unit_test(atab_atom_pointers_equal_what_the_table_returns),
        cmocka_unit_test(tables_without_the_default_set_make_dynamic_atoms),
        cmocka_unit_test(strings_outside_the_sets_stay_dynamic),
        cmocka_unit_test(ref_release_and_gc_do_nothing_to_static_atoms),
        cmocka_unit_test(sweeps_keep_cached_static_atoms),
        cmocka_unit_test(host_set_atoms_come_back_with_and_without_the_default_set),
        cmocka_unit_test(long_and_non_ascii_host_atoms_are_found_through_utf16),
        cmocka_unit_test(overlapping_host_sets_first_registered_wins),
        cmocka_unit_test(bad_sets_are_refused),
        cmocka_unit_test(out_of_memory_while_registering_leaves_nothing),
        cmocka_unit_test(failing_to_cache_a_static_atom_is_benign),
        cmocka_unit_test(registering_sets_allocates_no_block_per_atom),
        cmocka_unit_test(reporter_counts_the_registered_sets),
        cmocka_unit_test(concurrent_first_lookups_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
