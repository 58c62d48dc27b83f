/*
** test_intern.c - identity: equal bytes give one atom, different bytes
** different atoms, at every length the issue names; lookup never inserts.
*/
#include "test_util.h"

static const size_t lengths[] = {0, 1, 7, 8, 15, 16, 63, 64, 255, 4096, 1u << 20};
#define NLEN (sizeof lengths / sizeof lengths[0])

static char *filled(size_t len, char c)
{
    char *s = malloc(len + 1);
    memset(s, c, len);
    s[len] = '\0';
    return s;
}

static void equal_bytes_give_the_same_atom_at_every_length(void **state)
{
    (void)state;
    atab_table *t = plain_table(NULL);
    const atab_atom *first[NLEN];
    for (size_t i = 0; i < NLEN; i++) {
        char *a = filled(lengths[i], 'x'), *b = filled(lengths[i], 'x');
        first[i] = atab_intern(t, a, lengths[i]);
        assert_non_null(first[i]);
        assert_ptr_equal(atab_intern(t, b, lengths[i]), first[i]);
        assert_int_equal(atab_len(first[i]), lengths[i]);
        assert_memory_equal(atab_chars(first[i]), a, lengths[i]);
        assert_int_equal(atab_chars(first[i])[lengths[i]], '\0');
        assert_true(atab_is_ascii(first[i]));
        assert_false(atab_is_static(first[i]));
        free(a);
        free(b);
    }
    for (size_t i = 0; i < NLEN; i++)   /* all distinct, all still there */
        for (size_t j = 0; j < i; j++)
            assert_ptr_not_equal(first[i], first[j]);
    assert_int_equal(atab_count(t), NLEN);
    atab_table_free(t);
}

static void different_bytes_give_different_atoms(void **state)
{
    (void)state;
    atab_table *t = plain_table(NULL);
    const atab_atom *a = atab_intern(t, "abc", 3);
    const atab_atom *b = atab_intern(t, "abd", 3);
    const atab_atom *c = atab_intern(t, "ab", 2);
    assert_ptr_not_equal(a, b);
    assert_ptr_not_equal(a, c);
    assert_ptr_equal(atab_intern_cstr(t, "abc"), a);
    atab_table_free(t);
}

static void embedded_nul_is_part_of_the_atom(void **state)
{
    (void)state;
    atab_table *t = plain_table(NULL);
    const atab_atom *a = atab_intern(t, "a\0b", 3);
    const atab_atom *b = atab_intern(t, "a\0c", 3);
    const atab_atom *c = atab_intern(t, "a", 1);
    assert_non_null(a);
    assert_int_equal(atab_len(a), 3);
    assert_memory_equal(atab_chars(a), "a\0b", 4);
    assert_ptr_not_equal(a, b);
    assert_ptr_not_equal(a, c);
    assert_ptr_equal(atab_intern(t, "a\0b", 3), a);
    atab_table_free(t);
}

static void lookup_finds_but_never_inserts(void **state)
{
    (void)state;
    atab_table *t = plain_table(NULL);
    assert_null(atab_lookup(t, "nope", 4));
    assert_int_equal(atab_last_error(), ATAB_OK);
    assert_int_equal(atab_count(t), 0);
    const atab_atom *a = atab_intern(t, "yes", 3);
    assert_ptr_equal(atab_lookup(t, "yes", 3), a);
    assert_null(atab_lookup(t, "nope", 4));
    assert_int_equal(atab_count(t), 1);
    atab_table_free(t);
}

static void many_atoms_keep_their_identity_through_growth(void **state)
{
    (void)state;
    enum { N = 50000 };
    atab_table *t = plain_table(NULL);
    const atab_atom **atoms = malloc(N * sizeof *atoms);
    char buf[32];
    for (int i = 0; i < N; i++) {
        int n = snprintf(buf, sizeof buf, "id-%d", i);
        atoms[i] = atab_intern(t, buf, (size_t)n);
        assert_non_null(atoms[i]);
    }
    assert_int_equal(atab_count(t), N);
    for (int i = 0; i < N; i++) {
        int n = snprintf(buf, sizeof buf, "id-%d", i);
        assert_ptr_equal(atab_lookup(t, buf, (size_t)n), atoms[i]);
        assert_string_equal(atab_chars(atoms[i]), buf);
    }
    free(atoms);
    atab_table_free(t);
}

static void non_ascii_bytes_clear_the_ascii_flag(void **state)
{
    (void)state;
    atab_table *t = plain_table(NULL);
    const atab_atom *a = atab_intern_cstr(t, "caf\xc3\xa9");
    assert_false(atab_is_ascii(a));
    assert_true(atab_is_ascii(atab_intern_cstr(t, "cafe")));
    atab_table_free(t);
}

static void hash_is_stable_and_differs_between_atoms(void **state)
{
    (void)state;
    atab_table *t = plain_table(NULL);
    const atab_atom *a = atab_intern_cstr(t, "alpha");
    uint32_t h = atab_hash(a);
    for (int i = 0; i < 1000; i++) {
        char buf[16];
        snprintf(buf, sizeof buf, "filler%d", i);
        atab_intern_cstr(t, buf);
    }
    assert_int_equal(atab_hash(atab_intern_cstr(t, "alpha")), h);
    assert_int_not_equal(atab_hash(atab_intern_cstr(t, "beta")), h);
    atab_table_free(t);
}

static void default_table_and_random_seeds_work(void **state)
{
    (void)state;
    atab_table *t1 = atab_table_new(NULL), *t2 = atab_table_new(NULL);
    assert_non_null(t1);
    assert_non_null(t2);
    const atab_atom *a = atab_intern_cstr(t1, "same");
    const atab_atom *b = atab_intern_cstr(t2, "same");
    assert_ptr_not_equal(a, b);   /* tables are independent */
    assert_ptr_equal(atab_intern_cstr(t1, "same"), a);
    assert_ptr_equal(atab_intern_cstr(t2, "same"), b);
    atab_table_free(t1);
    atab_table_free(t2);
    atab_table_free(NULL);        /* accepted */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(equal_bytes_give_the_same_atom_at_every_length),
        cmocka_unit_test(different_bytes_give_different_atoms),
        cmocka_unit_test(embedded_nul_is_part_of_the_atom),
        cmocka_unit_test(lookup_finds_but_never_inserts),
        cmocka_unit_test(many_atoms_keep_their_identity_through_growth),
        cmocka_unit_test(non_ascii_bytes_clear_the_ascii_flag),
        cmocka_unit_test(hash_is_stable_and_differs_between_atoms),
        cmocka_unit_test(default_table_and_random_seeds_work),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
