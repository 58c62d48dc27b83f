/*
** test_errors.c - bad input at every entry gives NULL and a clear error
** code, and leaves the table as it was.
*/
#include "test_util.h"

static void null_arguments_are_einval(void **state)
{
    (void)state;
    atab_table *t = plain_table(NULL);
    const atab_atom *keep = atab_intern_cstr(t, "keep");
    assert_null(atab_intern(NULL, "a", 1));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    assert_null(atab_intern(t, NULL, 1));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    assert_null(atab_intern_cstr(t, NULL));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    assert_null(atab_intern_utf16(t, NULL, 2));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    assert_null(atab_lookup(NULL, "a", 1));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    assert_int_equal(atab_gc(NULL), 0);
    assert_int_equal(atab_get_stats(t, NULL), ATAB_EINVAL);
    assert_int_equal(atab_count(NULL), 0);
    assert_ptr_equal(atab_ref(NULL), NULL);
    /* NULL with length 0 is the empty string, not an error */
    const atab_atom *e = atab_intern(t, NULL, 0);
    assert_non_null(e);
    assert_int_equal(atab_len(e), 0);
    assert_int_equal(atab_count(t), 2);
    assert_ptr_equal(atab_lookup(t, "keep", 4), keep);
    atab_table_free(t);
}

static void oversized_lengths_are_etoolong(void **state)
{
    (void)state;
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = plain_table(&al);
    long allocs = c.allocs;
    assert_null(atab_intern(t, "x", ATAB_MAX_LEN + 1));
    assert_int_equal(atab_last_error(), ATAB_ETOOLONG);
    assert_null(atab_intern(t, "x", SIZE_MAX));
    assert_int_equal(atab_last_error(), ATAB_ETOOLONG);
    assert_null(atab_lookup(t, "x", SIZE_MAX));
    assert_int_equal(atab_last_error(), ATAB_ETOOLONG);
    assert_null(atab_intern_utf16(t, (const uint16_t *)"xx", SIZE_MAX));
    assert_int_equal(atab_last_error(), ATAB_ETOOLONG);
    assert_int_equal(c.allocs, allocs);   /* nothing was attempted */
    atab_table_free(t);
}

static void every_code_has_a_message(void **state)
{
    (void)state;
    int codes[] = {ATAB_OK, ATAB_EINVAL, ATAB_ETOOLONG, ATAB_EUTF16,
                   ATAB_ENOMEM, ATAB_ELIMIT, ATAB_EREFS, ATAB_EABI};
    for (size_t i = 0; i < sizeof codes / sizeof *codes; i++) {
        const char *m = atab_strerror(codes[i]);
        assert_non_null(m);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(m, atab_strerror(codes[j]));
    }
    assert_string_equal(atab_strerror(12345), "unknown error code");
    assert_non_null(atab_version());
}

static void bad_options_are_einval(void **state)
{
    (void)state;
    atab_allocator broken = {NULL, NULL, NULL, NULL};
    atab_options o;
    memset(&o, 0, sizeof o);
    o.allocator = &broken;
    assert_null(atab_table_new(&o));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    memset(&o, 0, sizeof o);
    o.n_static_sets = 3;   /* but no array */
    assert_null(atab_table_new(&o));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
}

static void the_memory_limit_refuses_inserts_but_keeps_atoms(void **state)
{
    (void)state;
    atab_options o;
    memset(&o, 0, sizeof o);
    o.flags = ATAB_NO_DEFAULT_STATICS;
    o.memory_limit = 64 * 1024;
    atab_table *t = atab_table_new(&o);
    assert_non_null(t);
    const atab_atom *first = atab_intern_cstr(t, "first");
    char buf[64];
    int i, n = 0;
    for (i = 0; i < 100000; i++) {
        snprintf(buf, sizeof buf, "limit-%d", i);
        if (!atab_intern_cstr(t, buf))
            break;
        n++;
    }
    assert_true(i < 100000);
    assert_int_equal(atab_last_error(), ATAB_ELIMIT);
    atab_stats st;
    atab_get_stats(t, &st);
    assert_true(st.bytes <= o.memory_limit);
    assert_ptr_equal(atab_lookup(t, "first", 5), first);
    assert_int_equal(atab_count(t), (size_t)n + 1);
    atab_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(null_arguments_are_einval),
        cmocka_unit_test(oversized_lengths_are_etoolong),
        cmocka_unit_test(every_code_has_a_message),
        cmocka_unit_test(bad_options_are_einval),
        cmocka_unit_test(the_memory_limit_refuses_inserts_but_keeps_atoms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
