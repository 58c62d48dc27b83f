/* SPDX-License-Identifier: MIT */
/*
** test_intern.c - identity: equal bytes give one atom, different bytes
** different atoms, at every length the issue names; lookup never inserts.
*/
#include <sys/mman.h>
#include <unistd.h>

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

/* Every length from 1 to 40 (new atoms copy up to 32 bytes a word or two
** from each end, longer ones as a block), a byte >= 0x80 at each place: the
** flag is clear, and the characters are the key's, NUL-terminated. */
static void a_high_byte_anywhere_clears_the_ascii_flag(void **state)
{
    (void)state;
    atab_table *t = plain_table(NULL);
    char buf[41];
    for (size_t len = 1; len <= 40; len++) {
        memset(buf, 'a' + (int)(len % 26), len);
        buf[len] = '\0';
        const atab_atom *plain = atab_intern(t, buf, len);
        assert_true(atab_is_ascii(plain));
        assert_int_equal(atab_len(plain), len);
        assert_memory_equal(atab_chars(plain), buf, len + 1);
        for (size_t i = 0; i < len; i++) {
            char c = buf[i];
            buf[i] = (char)(0x80 | i);
            const atab_atom *a = atab_intern(t, buf, len);
            assert_false(atab_is_ascii(a));
            assert_memory_equal(atab_chars(a), buf, len + 1);
            buf[i] = c;
        }
    }
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

/* Every byte value at every position: only 'A'..'Z' change. */
static void intern_lower_folds_ascii_uppercase_only(void **state)
{
    (void)state;
    atab_table *t = plain_table(NULL);
    char in[300], want[300];
    for (size_t len = 0; len < sizeof in; len += len < 40 ? 1 : 37) {
        for (size_t i = 0; i < len; i++) {
            in[i] = (char)((i * 37 + len) % 256);
            want[i] = in[i] >= 'A' && in[i] <= 'Z' ? (char)(in[i] + 32) : in[i];
        }
        const atab_atom *a = atab_intern_lower(t, in, len);
        assert_non_null(a);
        assert_ptr_equal(atab_lookup(t, want, len), a);
        assert_int_equal(atab_len(a), len);
        assert_memory_equal(atab_chars(a), want, len);
    }
    assert_ptr_equal(atab_intern_lower(t, "DiV", 3), atab_intern(t, "div", 3));
    assert_ptr_equal(atab_intern_lower(t, "CAF\xc3\x89", 5), atab_intern(t, "caf\xc3\x89", 5));
    assert_ptr_equal(atab_intern_lower(t, NULL, 0), atab_intern(t, "", 0));
    atab_table_free(t);
}

/* Lowercase input is interned in place; uppercase input past 256 bytes is
** folded in a block from the table's allocator, which then may fail. */
static void intern_lower_copies_only_long_uppercase_keys(void **state)
{
    (void)state;
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = plain_table(&al);
    char low[1000], up[1000];
    memset(low, 'q', sizeof low);
    memset(up, 'Q', sizeof up);
    const atab_atom *a = atab_intern(t, low, sizeof low);
    const atab_atom *s = atab_intern(t, low, 200);
    c.fail_at = c.attempts + 1, c.fail_after = 1;   /* every allocation fails */
    assert_ptr_equal(atab_intern_lower(t, low, sizeof low), a);   /* no copy */
    assert_ptr_equal(atab_intern_lower(t, up, 200), s);           /* the stack */
    atab_release(t, a), atab_release(t, s);
    assert_null(atab_intern_lower(t, up, sizeof up));
    assert_int_equal(atab_last_error(), ATAB_ENOMEM);
    c.fail_at = 0;
    assert_ptr_equal(atab_intern_lower(t, up, sizeof up), a);   /* folded copy */
    assert_int_equal(atab_count(t), 2);
    atab_release(t, a), atab_release(t, a), atab_release(t, s);
    atab_table_free(t);
    assert_int_equal(c.live, 0);
    assert_false(c.size_mismatch);
}

static void intern_lower_errors_are_intern_errors(void **state)
{
    (void)state;
    atab_table *t = plain_table(NULL);
    assert_null(atab_intern_lower(NULL, "a", 1));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    assert_null(atab_intern_lower(t, NULL, 1));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    assert_null(atab_intern_lower(t, "A", ATAB_MAX_LEN + 1));
    assert_int_equal(atab_last_error(), ATAB_ETOOLONG);
    assert_non_null(atab_intern_lower(t, "Ok", 2));   /* success: error left alone */
    assert_int_equal(atab_last_error(), ATAB_ETOOLONG);
    atab_table_free(t);
}

/* Keys of 1 to 32 bytes placed against unmapped pages: starting at each of
** the first 9 bytes of a page after an unmapped one, and ending at the last
** byte before another. Each gives the atom that the same bytes give from
** the heap, as UTF-8 and as UTF-16 (hashed off the hit path), interned and
** looked up; no read leaves the key's pages (a read before a key that
** starts a page would fault). Bytes before a key never change its atom. */
static void short_keys_read_on_their_pages_only(void **state)
{
    (void)state;
    long page = sysconf(_SC_PAGESIZE);
    char *m = mmap(NULL, 3 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    assert_true(m != MAP_FAILED);
    char *mid = m + page;
    assert_int_equal(mprotect(m, (size_t)page, PROT_NONE), 0);
    assert_int_equal(mprotect(mid + page, (size_t)page, PROT_NONE), 0);
    atab_table *t = plain_table(NULL);
    static const char src[] = "abcdefghijklmnopqrstuvwxyz012345";
    for (size_t len = 1; len <= 32; len++) {
        char heap[40];
        uint16_t u16[32];
        memcpy(heap, src, len);
        for (size_t i = 0; i < len; i++)
            u16[i] = (unsigned char)src[i];
        const atab_atom *a = atab_intern(t, heap, len);
        assert_non_null(a);
        assert_ptr_equal(atab_intern_utf16(t, u16, len), a);
        atab_release(t, a);
        for (size_t off = 0; off <= 9; off++) {
            char *k = off < 9 ? mid + off : mid + page - len;   /* 9: the page's end */
            memset(mid, off & 1 ? 0xff : 0, 16);   /* what lies before the key */
            memcpy(k, src, len);
            assert_ptr_equal(atab_lookup(t, k, len), a);
            assert_ptr_equal(atab_intern(t, k, len), a);
            atab_release(t, a);
            atab_release(t, a);
        }
        atab_release(t, a);
    }
    /* a key's length is part of it: "ab", "\0ab" and "ab\0" are three atoms */
    memcpy(mid, "\0ab\0", 4);
    const atab_atom *ab = atab_intern(t, mid + 1, 2), *zab = atab_intern(t, mid, 3);
    const atab_atom *abz = atab_intern(t, mid + 1, 3);
    assert_ptr_not_equal(ab, zab);
    assert_ptr_not_equal(ab, abz);
    assert_ptr_not_equal(zab, abz);
    assert_ptr_equal(atab_intern(t, "ab", 2), ab);
    atab_table_free(t);
    munmap(m, 3 * (size_t)page);
}

/* The content hash is of the bytes only: two tables (different seeds),
** static and dynamic atoms, and atab_hash_bytes agree; seeds differ. */
static void content_hash_depends_on_bytes_and_seed_only(void **state)
{
    (void)state;
    atab_options o;
    memset(&o, 0, sizeof o);
    o.flags = ATAB_FIXED_SEED;
    o.seed = 7;
    atab_table *stat = atab_table_new(&o);                 /* default statics */
    atab_table *dyn = plain_table(NULL), *rnd = atab_table_new(NULL);
    const char *keys[] = {"div", "", "x", "0123456789abcdef", "a longer key past sixteen bytes",
                          "and one past thirty-two bytes, which XXH3 hashes"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        size_t n = strlen(keys[i]);
        const atab_atom *a = atab_intern(dyn, keys[i], n), *b = atab_intern(rnd, keys[i], n);
        const atab_atom *c = atab_intern(stat, keys[i], n);
        uint64_t h = atab_hash_content(a, 99);
        assert_true(h == atab_hash_content(b, 99));
        assert_true(h == atab_hash_content(c, 99));
        assert_true(h == atab_hash_bytes(99, keys[i], n));
        assert_true(h != atab_hash_content(a, 100));
        for (size_t j = 0; j < i; j++)
            assert_true(h != atab_hash_bytes(99, keys[j], strlen(keys[j])));
    }
    assert_true(atab_is_static(atab_intern(stat, "div", 3)));
    assert_false(atab_is_static(atab_intern(dyn, "div", 3)));
    assert_true(atab_hash_bytes(5, NULL, 3) == atab_hash_bytes(5, "", 0));
    assert_true(atab_hash_content(NULL, 5) == 0);
    atab_table_free(stat);
    atab_table_free(dyn);
    atab_table_free(rnd);
}

/* The same in every run, table and process: fixed values (this version,
** little-endian), on tables with random seeds. */
static void content_hash_is_the_same_in_every_run(void **state)
{
    (void)state;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    atab_table *t = atab_table_new(NULL);
    const atab_atom *a = atab_intern(t, "stable", 6);
    const atab_atom *b = atab_intern(t, "stable key longer than 16", 25);
    const atab_atom *c = atab_intern_cstr(t, "stable key longer than 32 bytes, for XXH3");
    assert_true(atab_hash_content(a, 1) == UINT64_C(0xc838ba640448984b));
    assert_true(atab_hash_content(b, 1) == UINT64_C(0x1f511f7e0a85f415));
    assert_true(atab_hash_content(c, 1) == UINT64_C(0x305715d74116af7c));
    atab_table_free(t);
#endif
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
        cmocka_unit_test(a_high_byte_anywhere_clears_the_ascii_flag),
        cmocka_unit_test(hash_is_stable_and_differs_between_atoms),
        cmocka_unit_test(default_table_and_random_seeds_work),
        cmocka_unit_test(intern_lower_folds_ascii_uppercase_only),
        cmocka_unit_test(intern_lower_copies_only_long_uppercase_keys),
        cmocka_unit_test(intern_lower_errors_are_intern_errors),
        cmocka_unit_test(short_keys_read_on_their_pages_only),
        cmocka_unit_test(content_hash_depends_on_bytes_and_seed_only),
        cmocka_unit_test(content_hash_is_the_same_in_every_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
