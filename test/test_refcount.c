/*
** test_refcount.c - reference counts, revival before a sweep, sweeps that
** free exactly the unused atoms, the automatic sweep threshold.
*/
#include "test_util.h"

static atab_table *table_with_threshold(size_t threshold, const atab_allocator *al)
{
    atab_options o;
    memset(&o, 0, sizeof o);
    o.flags = ATAB_FIXED_SEED | ATAB_NO_DEFAULT_STATICS;
    o.sweep_threshold = threshold;
    o.allocator = al;
    return atab_table_new(&o);
}

static void each_intern_is_a_reference(void **state)
{
    (void)state;
    atab_table *t = table_with_threshold(SIZE_MAX, NULL);
    const atab_atom *a = atab_intern_cstr(t, "x");
    atab_intern_cstr(t, "x");
    atab_ref(a);
    /* three references: two releases leave it used */
    assert_int_equal(atab_release(t, a), ATAB_OK);
    assert_int_equal(atab_release(t, a), ATAB_OK);
    assert_int_equal(atab_gc(t), 0);
    assert_ptr_equal(atab_lookup(t, "x", 1), a);   /* +1 again */
    atab_release(t, a);
    atab_release(t, a);
    atab_stats st;
    atab_get_stats(t, &st);
    assert_int_equal(st.atoms, 1);
    assert_int_equal(st.unused, 1);
    assert_int_equal(atab_gc(t), 1);
    assert_null(atab_lookup(t, "x", 1));
    assert_int_equal(atab_count(t), 0);
    atab_table_free(t);
}

static void an_unused_atom_interned_again_is_revived_not_reallocated(void **state)
{
    (void)state;
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = table_with_threshold(SIZE_MAX, &al);
    const atab_atom *a = atab_intern_cstr(t, "revive-me");
    atab_release(t, a);
    long allocs = c.allocs;
    const atab_atom *b = atab_intern_cstr(t, "revive-me");
    assert_ptr_equal(a, b);
    assert_int_equal(c.allocs, allocs);
    assert_int_equal(atab_gc(t), 0);   /* it is used again */
    assert_ptr_equal(atab_lookup(t, "revive-me", 9), a);
    atab_release(t, a);
    atab_release(t, a);
    atab_table_free(t);
    assert_int_equal(c.live, 0);
}

static void sweep_frees_exactly_the_unused(void **state)
{
    (void)state;
    enum { N = 3000 };
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = table_with_threshold(SIZE_MAX, &al);
    const atab_atom *atoms[N];
    char buf[32];
    for (int i = 0; i < N; i++) {
        snprintf(buf, sizeof buf, "atom%d", i);
        atoms[i] = atab_intern_cstr(t, buf);
    }
    for (int i = 0; i < N; i += 3)
        atab_release(t, atoms[i]);
    long live = c.live;
    size_t freed = atab_gc(t);
    assert_int_equal(freed, (N + 2) / 3);
    assert_int_equal(c.live, live - (long)freed);
    assert_int_equal(atab_count(t), N - freed);
    for (int i = 0; i < N; i++) {
        snprintf(buf, sizeof buf, "atom%d", i);
        const atab_atom *a = atab_lookup(t, buf, strlen(buf));
        if (i % 3 == 0) {
            assert_null(a);
        } else {
            assert_ptr_equal(a, atoms[i]);
            atab_release(t, a);
        }
    }
    assert_int_equal(atab_gc(t), 0);
    atab_table_free(t);
    assert_int_equal(c.live, 0);
}

static void crossing_the_threshold_sweeps_by_itself(void **state)
{
    (void)state;
    atab_table *t = table_with_threshold(100, NULL);
    const atab_atom *atoms[150];
    char buf[32];
    for (int i = 0; i < 150; i++) {
        snprintf(buf, sizeof buf, "t%d", i);
        atoms[i] = atab_intern_cstr(t, buf);
    }
    for (int i = 0; i < 99; i++)
        atab_release(t, atoms[i]);
    assert_int_equal(atab_count(t), 150);   /* 99 unused: below threshold */
    atab_release(t, atoms[99]);              /* the 100th: sweep */
    assert_int_equal(atab_count(t), 50);
    assert_null(atab_lookup(t, "t0", 2));
    assert_ptr_equal(atab_lookup(t, "t100", 4), atoms[100]);
    atab_table_free(t);
}

/* A release of a reference nobody holds is refused (ATAB_EREFS, counted in
** misuse) and changes nothing, so the sequence intern, release, release,
** intern, gc frees nothing that the second intern's holder holds. */
static void a_double_release_never_frees_a_held_atom(void **state)
{
    (void)state;
    atab_table *t = table_with_threshold(SIZE_MAX, NULL);
    const atab_atom *a = atab_intern_cstr(t, "once");
    assert_int_equal(atab_release(t, a), ATAB_OK);
    assert_int_equal(atab_release(t, a), ATAB_EREFS);
    assert_int_equal(atab_last_error(), ATAB_EREFS);
    assert_ptr_equal(atab_intern_cstr(t, "once"), a);   /* revived, held again */
    assert_int_equal(atab_gc(t), 0);
    atab_stats st;
    atab_get_stats(t, &st);
    assert_int_equal(st.misuse, 1);
    assert_int_equal(st.atoms, 1);
    assert_int_equal(st.unused, 0);
    assert_ptr_equal(atab_intern_cstr(t, "once"), a);   /* still intact */
    assert_int_equal(atab_release(t, a), ATAB_OK);
    assert_int_equal(atab_release(t, a), ATAB_OK);
    assert_int_equal(atab_gc(t), 1);   /* released by both holders: freed */
    assert_int_equal(atab_release(t, NULL), ATAB_EINVAL);
    atab_table_free(t);
}

static void a_saturated_count_never_frees(void **state)
{
    (void)state;
    atab_table *t = table_with_threshold(SIZE_MAX, NULL);
    const atab_atom *a = atab_intern_cstr(t, "hot");
    /* Force the count near the top (white-box: the layout is public). */
    ((atab_atom *)a)->atab__refcnt = (1u << 30) - 1;
    atab_ref(a);
    atab_ref(a);
    assert_true(a->atab__refcnt >= (1u << 30));     /* saturated, no wrap */
    assert_true(a->atab__refcnt < (1u << 31));
    for (int i = 0; i < 10; i++)
        atab_release(t, a);
    assert_int_equal(atab_gc(t), 0);
    assert_ptr_equal(atab_lookup(t, "hot", 3), a);
    atab_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_intern_is_a_reference),
        cmocka_unit_test(an_unused_atom_interned_again_is_revived_not_reallocated),
        cmocka_unit_test(sweep_frees_exactly_the_unused),
        cmocka_unit_test(crossing_the_threshold_sweeps_by_itself),
        cmocka_unit_test(a_double_release_never_frees_a_held_atom),
        cmocka_unit_test(a_saturated_count_never_frees),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
