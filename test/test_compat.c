/* SPDX-License-Identifier: MIT */
/*
** test_compat.c - what a host checks at compile and run time: the header's
** ATAB_VERSION_* macros name the library it runs with, and a static set
** generated for another ATAB_STATIC_ABI is refused with its own code.
*/
#include "test_util.h"
#include "atomtab_atoms.h"

static void version_macros_match_the_library(void **state)
{
    (void)state;
    char want[64];
    snprintf(want, sizeof want, "%d.%d.%d", ATAB_VERSION_MAJOR, ATAB_VERSION_MINOR,
             ATAB_VERSION_PATCH);
    assert_string_equal(atab_version(), want);
#if ATAB_VERSION_MAJOR < 0 || ATAB_VERSION_MINOR < 0 || ATAB_VERSION_PATCH < 0
#error "version macros must be usable in #if"
#endif
}

static atab_table *table_with(const atab_static_set *set)
{
    const atab_static_set *sets[] = {set};
    atab_options o = {0};
    o.flags = ATAB_NO_DEFAULT_STATICS;
    o.static_sets = sets;
    o.n_static_sets = 1;
    return atab_table_new(&o);
}

static void a_set_of_another_abi_fails_with_eabi(void **state)
{
    (void)state;
    atab_static_set newer = atab_static_default, older = atab_static_default;
    newer.abi = ATAB_STATIC_ABI + 1;
    older.abi = ATAB_STATIC_ABI - 1;
    assert_null(table_with(&newer));
    assert_int_equal(atab_last_error(), ATAB_EABI);
    assert_null(table_with(&older));
    assert_int_equal(atab_last_error(), ATAB_EABI);
    assert_non_null(strstr(atab_strerror(ATAB_EABI), "ATAB_STATIC_ABI"));
    assert_string_not_equal(atab_strerror(ATAB_EABI), atab_strerror(ATAB_EINVAL));
    atab_table *t = table_with(&atab_static_default);   /* this ABI: fine */
    assert_non_null(t);
    assert_ptr_equal(atab_intern_cstr(t, "div"), ATAB_ATOM(div));
    atab_table_free(t);
}

static void a_null_set_is_still_einval(void **state)
{
    (void)state;
    assert_null(table_with(NULL));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(version_macros_match_the_library),
        cmocka_unit_test(a_set_of_another_abi_fails_with_eabi),
        cmocka_unit_test(a_null_set_is_still_einval),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
