/* SPDX-License-Identifier: MIT */
/*
** test_utf16.c - UTF-16 input: same atom as its UTF-8 twin, no allocation
** on a hit, unpaired surrogates rejected.
*/
#include "test_util.h"

/* Converts NUL-terminated UTF-8 test text to UTF-16 (valid input only). */
static size_t to_u16(const char *s, uint16_t *out)
{
    return u8_to_u16(s, strlen(s), out);
}

static const char *samples[] = {
    "", "div", "data-id",             /* ASCII */
    "caf\xc3\xa9", "\xc3\x9f\xc3\xa4", /* 2-byte */
    "\xe2\x82\xac" "uro", "\xe6\x97\xa5\xe6\x9c\xac", /* 3-byte */
    "\xf0\x9f\x98\x80", "a\xf0\x9d\x84\x9e" "b", /* 4-byte (surrogate pairs) */
    "seventeen bytes!!", "data-attribute-name-of-32-bytes!", /* 17-32 bytes: their own class */
    "caf\xc3\xa9 au lait, s'il vous pla\xc3\xaet",              /* 17-32, 2-byte */
    "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"
    "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac", /* 33 bytes: past them */
};

static void utf8_and_utf16_give_the_same_atom(void **state)
{
    (void)state;
    atab_table *t = plain_table(NULL);
    for (size_t i = 0; i < sizeof samples / sizeof *samples; i++) {
        uint16_t u[32];
        size_t n = to_u16(samples[i], u);
        const atab_atom *a = atab_intern_cstr(t, samples[i]);
        assert_non_null(a);
        assert_ptr_equal(atab_intern_utf16(t, u, n), a);
        assert_ptr_equal(atab_lookup_utf16(t, u, n), a);
        assert_string_equal(atab_chars(a), samples[i]);
    }
    atab_table_free(t);
}

static void utf16_first_then_utf8_finds_it(void **state)
{
    (void)state;
    atab_table *t = plain_table(NULL);
    uint16_t u[8];
    size_t n = to_u16("\xe2\x82\xac" "5", u);
    const atab_atom *a = atab_intern_utf16(t, u, n);
    assert_non_null(a);
    assert_int_equal(atab_len(a), 4);
    assert_false(atab_is_ascii(a));
    assert_ptr_equal(atab_intern_cstr(t, "\xe2\x82\xac" "5"), a);
    atab_table_free(t);
}

/* Longer than the stack buffer: hashed and compared chunk by chunk. */
static void long_utf16_text_agrees_with_utf8(void **state)
{
    (void)state;
    atab_table *t = plain_table(NULL);
    enum { REPS = 400 };
    static char u8[REPS * 7 + 1];
    static uint16_t u16[REPS * 4];
    u8[0] = '\0';
    for (int i = 0; i < REPS; i++)
        strcat(u8, "a\xc3\xa9\xf0\x9f\x98\x80");   /* 1 + 2 + 4 bytes */
    size_t n = to_u16(u8, u16);
    const atab_atom *a = atab_intern_utf16(t, u16, n);
    assert_non_null(a);
    assert_int_equal(atab_len(a), strlen(u8));
    assert_ptr_equal(atab_intern_cstr(t, u8), a);
    assert_ptr_equal(atab_lookup_utf16(t, u16, n), a);
    u16[n - 3] = 'b';   /* differ near the end: a different atom */
    assert_ptr_not_equal(atab_intern_utf16(t, u16, n), a);
    atab_table_free(t);
}

static void a_utf16_hit_does_not_allocate(void **state)
{
    (void)state;
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = plain_table(&al);
    static uint16_t big[2000];
    for (int i = 0; i < 2000; i++)
        big[i] = (uint16_t)(0x400 + i % 50);   /* 2-byte chars: 4000 bytes */
    uint16_t small[] = {'i', 'd', 0xe9};
    assert_non_null(atab_intern_utf16(t, small, 3));
    assert_non_null(atab_intern_utf16(t, big, 2000));
    long before = c.allocs;
    for (int i = 0; i < 100; i++) {
        assert_non_null(atab_intern_utf16(t, small, 3));
        assert_non_null(atab_intern_utf16(t, big, 2000));
    }
    assert_int_equal(c.allocs, before);
    atab_table_free(t);
    assert_int_equal(c.live, 0);
}

static void unpaired_surrogates_are_an_error(void **state)
{
    (void)state;
    atab_table *t = plain_table(NULL);
    const atab_atom *keep = atab_intern_cstr(t, "keep");
    uint16_t lone_high_end[] = {'a', 0xd800};
    uint16_t high_then_ascii[] = {0xd83d, 'x'};
    uint16_t lone_low[] = {0xdc00, 'a'};
    uint16_t high_high_low[] = {0xd800, 0xd800, 0xdc00};
    uint16_t *bad[] = {lone_high_end, high_then_ascii, lone_low, high_high_low};
    size_t lens[] = {2, 2, 2, 3};
    for (int i = 0; i < 4; i++) {
        assert_null(atab_intern_utf16(t, bad[i], lens[i]));
        assert_int_equal(atab_last_error(), ATAB_EUTF16);
        assert_null(atab_lookup_utf16(t, bad[i], lens[i]));
        assert_int_equal(atab_last_error(), ATAB_EUTF16);
    }
    assert_int_equal(atab_count(t), 1);
    assert_ptr_equal(atab_lookup(t, "keep", 4), keep);
    atab_table_free(t);
}

/* 'A'..'Z' units fold, others (non-ASCII, surrogate pairs) stay; short
** keys on the stack, long ones through the allocator; the same atom as
** the UTF-8 fold. */
static void intern_lower_utf16_folds_ascii_uppercase_only(void **state)
{
    (void)state;
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = plain_table(&al);
    uint16_t u[400];
    size_t n = to_u16("DiV-\xc3\x89t\xc3\xa9-\xf0\x9f\x98\x80Z", u);
    const atab_atom *a = atab_intern_cstr(t, "div-\xc3\x89t\xc3\xa9-\xf0\x9f\x98\x80z");
    long before = c.attempts;
    assert_ptr_equal(atab_intern_lower_utf16(t, u, n), a);
    const char *up8 = "DIV-\xc3\x89T\xc3\xa9-\xf0\x9f\x98\x80Z";
    assert_ptr_equal(atab_intern_lower_utf16(t, u, n), atab_intern_lower(t, up8, strlen(up8)));
    assert_int_equal(c.attempts, before);   /* hits on the stack */
    for (size_t i = 0; i < 400; i++)
        u[i] = 'X';
    const atab_atom *l = atab_intern_lower_utf16(t, u, 400);
    assert_non_null(l);
    assert_int_equal(atab_len(l), 400);
    assert_int_equal(atab_chars(l)[399], 'x');
    c.fail_at = c.attempts + 1, c.fail_after = 1;
    assert_null(atab_intern_lower_utf16(t, u, 400));   /* the copy fails */
    assert_int_equal(atab_last_error(), ATAB_ENOMEM);
    for (size_t i = 0; i < 400; i++)
        u[i] = 'x';
    assert_ptr_equal(atab_intern_lower_utf16(t, u, 400), l);   /* lowercase: no copy */
    u[3] = 0xd800;
    assert_null(atab_intern_lower_utf16(t, u, 400));
    assert_int_equal(atab_last_error(), ATAB_EUTF16);
    assert_null(atab_intern_lower_utf16(t, NULL, 1));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    c.fail_at = 0;
    atab_table_free(t);
    assert_int_equal(c.live, 0);
    assert_false(c.size_mismatch);
}

/* Text past the stack fold with an unpaired surrogate says ATAB_EUTF16,
** whatever the allocator would say: it is checked before its copy is
** allocated, so nothing is asked of the allocator. */
static void a_long_invalid_lower_utf16_is_refused_before_its_copy(void **state)
{
    (void)state;
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = plain_table(&al);
    const atab_atom *keep = atab_intern_cstr(t, "keep");
    uint16_t u[400];
    for (size_t i = 0; i < 400; i++)
        u[i] = 'X';
    u[399] = 0xd800;
    long before = c.attempts;
    c.fail_at = c.attempts + 1, c.fail_after = 1;
    assert_null(atab_intern_lower_utf16(t, u, 400));
    assert_int_equal(atab_last_error(), ATAB_EUTF16);
    assert_int_equal(c.attempts, before);
    c.fail_at = 0;
    assert_null(atab_intern_lower_utf16(t, u, 400));
    assert_int_equal(atab_last_error(), ATAB_EUTF16);
    assert_int_equal(atab_count(t), 1);
    assert_ptr_equal(atab_lookup(t, "keep", 4), keep);
    atab_table_free(t);
    assert_int_equal(c.live, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(utf8_and_utf16_give_the_same_atom),
        cmocka_unit_test(utf16_first_then_utf8_finds_it),
        cmocka_unit_test(long_utf16_text_agrees_with_utf8),
        cmocka_unit_test(a_utf16_hit_does_not_allocate),
        cmocka_unit_test(unpaired_surrogates_are_an_error),
        cmocka_unit_test(intern_lower_utf16_folds_ascii_uppercase_only),
        cmocka_unit_test(a_long_invalid_lower_utf16_is_refused_before_its_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
