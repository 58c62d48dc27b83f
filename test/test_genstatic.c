/*
** test_genstatic.c - the static set generator (tools/atomtab-genstatic.c,
** included here whole): good lists give a set whose index finds every
** atom; each kind of error in a list is reported with its line number;
** usage and I/O errors; --exclude.
*/
#include <unistd.h>

#include "test_util.h"
#define GENSTATIC_NO_MAIN
#include "../tools/atomtab-genstatic.c"

/* ---- a scratch directory and a runner ---- */

static char dir[64];

static int setup(void **state)
{
    (void)state;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/genstaticXXXXXX", tmp && strlen(tmp) < 40 ? tmp : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

static void rm(const char *name)
{
    char p[128];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    unlink(p);
}

static int teardown(void **state)
{
    (void)state;
    const char *names[] = {"list", "ex", "out.c", "out.h"};
    for (size_t i = 0; i < 4; i++)
        rm(names[i]);
    return rmdir(dir);
}

static void write_file(const char *name, const char *text, size_t len)
{
    char p[128];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    fclose(f);
}

/* Runs the generator on a list text; returns its exit status, *msgs gets
** what it wrote to its error stream (free it). */
static int run_gen(const char *text, size_t len, char **msgs, const char *extra)
{
    char list[128], oc[128], oh[128], ex[128];
    size_t n = 0;
    FILE *err = open_memstream(msgs, &n);
    snprintf(list, sizeof list, "%s/list", dir);
    snprintf(oc, sizeof oc, "%s/out.c", dir);
    snprintf(oh, sizeof oh, "%s/out.h", dir);
    snprintf(ex, sizeof ex, "%s/ex", dir);
    write_file("list", text, len);
    char *argv[] = {"gen", "--name", "tset", list, oc, oh, "--exclude", ex, NULL};
    int argc = extra ? 8 : 6;
    int rc = genstatic_main(argc, argv, err);
    fclose(err);
    return rc;
}

/* The generator fails on `text` with exactly one message, at `line`,
** containing `what`. */
static void expect_error(const char *text, size_t len, long line, const char *what)
{
    char *msgs = NULL, want[160];
    int rc = run_gen(text, len, &msgs, NULL);
    snprintf(want, sizeof want, "%s/list:%ld: ", dir, line);
    if (rc != 1 || !strstr(msgs, want) || !strstr(msgs, what) || strchr(msgs, '\n') !=
        msgs + strlen(msgs) - 1)
        fail_msg("list %s: want '%s...%s', got rc %d: %s", text, want, what, rc, msgs);
    free(msgs);
}

#define EXPECT_ERROR(text, line, what) expect_error(text, sizeof text - 1, line, what)

static char *read_out(const char *name)
{
    char p[128];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "rb");
    assert_non_null(f);
    char *buf = malloc(1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* ---- good lists ---- */

static void a_good_list_writes_the_set_and_its_macros(void **state)
{
    (void)state;
    static const char text[] = "# comment\n"
                               "div\n"
                               "data-id data_id\n"
                               "\"two words\" two_words\n"
                               "\"\" empty\n"
                               "\n"
                               "# second group\n"
                               "for\n"
                               "caf\xc3\xa9 cafe\n";
    char *msgs = NULL;
    assert_int_equal(run_gen(text, sizeof text - 1, &msgs, NULL), 0);
    assert_string_equal(msgs, "");
    free(msgs);
    char *h = read_out("out.h"), *c = read_out("out.c");
    assert_non_null(strstr(h, "#define TSET_ATOM(id)"));
    assert_non_null(strstr(h, "#define TSET_ATOM_COUNT 6\n"));
    assert_non_null(strstr(h, "tset__div = 0,"));
    assert_non_null(strstr(h, "tset__data_id = 12,"));   /* 8 + "div\0" */
    assert_non_null(strstr(h, "tset__for = "));
    assert_non_null(strstr(h, "extern const atab_static_set tset;"));
    assert_null(strstr(h, "ATAB_API"));
    assert_non_null(strstr(c, "\"caf\\303\\251\""));   /* octal escapes */
    assert_non_null(strstr(c, "\"two words\""));
    assert_non_null(strstr(c, "{{0x00000003u, 0}, \"\"}"));   /* "" : static|ascii */
    free(h);
    free(c);
}

/* Builds the index for n synthetic names and looks every one up the way
** static.c does. */
static void index_finds_every_key(size_t n)
{
    gs_list l;
    gs_index ix = {0, 0, 0, NULL, NULL};
    char name[32];
    uint64_t total;
    memset(&l, 0, sizeof l);
    for (size_t i = 0; i < n; i++) {
        int k = snprintf(name, sizeof name, "atom-%zu", i * 7919);
        assert_int_equal(push_atom(&l, name, (size_t)k, "x", (long)i + 1), 0);
    }
    assert_int_equal(layout(&l, &total), 0);
    assert_int_equal(build_index(&ix, &l), 0);
    assert_int_equal(ix.n_slots, n);
    for (size_t i = 0; i < n; i++) {
        uint64_t h = atab__static_hash(ix.seed, l.v[i].name, l.v[i].len);
        uint32_t d = ix.disp[atab__sh_bucket(h, ix.n_buckets)];
        assert_int_equal(ix.slots[atab__sh_slot(h, d, ix.n_slots)], i + 1);
    }
    free_list(&l);
    free(ix.disp);
    free(ix.slots);
}

static void the_index_is_perfect_for_small_and_large_sets(void **state)
{
    (void)state;
    size_t sizes[] = {1, 2, 3, 5, 64, 1000, 10000};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        index_finds_every_key(sizes[i]);
}

static void names_up_to_the_limit_are_accepted(void **state)
{
    (void)state;
    char text[ATAB_STATIC_MAXLEN + 16], *msgs = NULL;
    memset(text, 'n', ATAB_STATIC_MAXLEN);
    memcpy(text + ATAB_STATIC_MAXLEN, " longest\n", 9);
    assert_int_equal(run_gen(text, ATAB_STATIC_MAXLEN + 9, &msgs, NULL), 0);
    free(msgs);
}

static void exclude_leaves_out_the_other_lists_strings(void **state)
{
    (void)state;
    static const char ex[] = "b\nzz\n";
    static const char text[] = "a\nb\nc\n";
    char *msgs = NULL;
    write_file("ex", ex, sizeof ex - 1);
    assert_int_equal(run_gen(text, sizeof text - 1, &msgs, "ex"), 0);
    free(msgs);
    char *h = read_out("out.h");
    assert_non_null(strstr(h, "tset__a = "));
    assert_null(strstr(h, "tset__b = "));
    assert_non_null(strstr(h, "tset__c = "));
    assert_non_null(strstr(h, "_COUNT 2\n"));
    free(h);
    write_file("ex", "b\nb\n", 4);   /* errors in the excluded list count too */
    assert_int_equal(run_gen(text, sizeof text - 1, &msgs, "ex"), 1);
    assert_non_null(strstr(msgs, "/ex:2: duplicate name 'b'"));
    free(msgs);
}

/* ---- errors, each with its line ---- */

static void duplicates_are_errors_with_both_lines(void **state)
{
    (void)state;
    EXPECT_ERROR("a\nb\na\n", 3, "duplicate name 'a' (first on line 1)");
    EXPECT_ERROR("a-b a_b\nc\na_b\n", 3, "duplicate identifier 'a_b' (first on line 1)");
    EXPECT_ERROR("\"\" e\n\"\" f\n", 2, "duplicate name '' (first on line 1)");
}

static void empty_lines_out_of_place_are_errors(void **state)
{
    (void)state;
    EXPECT_ERROR("\na\n", 1, "empty line at the start");
    EXPECT_ERROR("a\n\n\nb\n", 3, "two empty lines in a row");
    EXPECT_ERROR("a\nb\n\n", 3, "empty line at the end");
    EXPECT_ERROR("a\n  \nb\n", 2, "line of only spaces or tabs");
    EXPECT_ERROR("a\n\t\nb\n", 2, "line of only spaces or tabs");
    EXPECT_ERROR("a\n b\n", 2, "leading whitespace");
}

static void bad_names_are_errors(void **state)
{
    (void)state;
    char text[ATAB_STATIC_MAXLEN + 16];
    memcpy(text, "ok\n", 3);
    memset(text + 3, 'n', ATAB_STATIC_MAXLEN + 1);
    memcpy(text + 3 + ATAB_STATIC_MAXLEN + 1, " x\n", 3);
    expect_error(text, ATAB_STATIC_MAXLEN + 7, 2, "name too long: 257 bytes");
    EXPECT_ERROR("a\n\x01x y\n", 2, "control character");
    EXPECT_ERROR("a\nb\n\xff y\n", 3, "not valid UTF-8");
    EXPECT_ERROR("\xed\xa0\x80 s\n", 1, "not valid UTF-8");   /* a surrogate */
    EXPECT_ERROR("\"abc\n", 1, "unterminated quoted name");
    EXPECT_ERROR("\"abc\"d x\n", 1, "text right after a quoted name");
    EXPECT_ERROR("a\nb\x00" "c\n", 2, "NUL byte");
}

static void bad_identifiers_are_errors(void **state)
{
    (void)state;
    EXPECT_ERROR("a\ndata-id\n", 2, "'data-id' is not a C identifier: give one after it");
    EXPECT_ERROR("data-id 1x\n", 1, "'1x' is not a C identifier");
    EXPECT_ERROR("a\nb c-d\n", 2, "'c-d' is not a C identifier");
    EXPECT_ERROR("a b c\n", 1, "text after the identifier: 'c'");
    EXPECT_ERROR("2d\n", 1, "'2d' is not a C identifier");
    EXPECT_ERROR("a\nx aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", 2,
                 "identifier too long");
}

static void every_error_is_reported_not_just_the_first(void **state)
{
    (void)state;
    static const char text[] = "a\na\n x\n\n\ny-z\n";
    char *msgs = NULL;
    assert_int_equal(run_gen(text, sizeof text - 1, &msgs, NULL), 1);
    assert_non_null(strstr(msgs, "list:2: duplicate name"));
    assert_non_null(strstr(msgs, "list:3: leading whitespace"));
    assert_non_null(strstr(msgs, "list:5: two empty lines"));
    assert_non_null(strstr(msgs, "list:6: 'y-z' is not a C identifier"));
    free(msgs);
}

static void an_empty_list_and_bad_usage_fail(void **state)
{
    (void)state;
    char *msgs = NULL;
    assert_int_equal(run_gen("# nothing\n", 10, &msgs, NULL), 1);
    assert_non_null(strstr(msgs, "no atoms"));
    free(msgs);
    size_t n;
    FILE *err = open_memstream(&msgs, &n);
    char *no_name[] = {"gen", "l", "o.c", "o.h", NULL};
    char *bad_name[] = {"gen", "--name", "9x", "l", "o.c", "o.h", NULL};
    char *two_few[] = {"gen", "--name", "x", "l", "o.c", NULL};
    char *unknown[] = {"gen", "--name", "x", "--what", "l", "o.c", "o.h", NULL};
    char *missing[] = {"gen", "--name", "x", "/nonexistent/list", "o.c", "o.h", NULL};
    assert_int_equal(genstatic_main(4, no_name, err), 2);
    assert_int_equal(genstatic_main(6, bad_name, err), 2);
    assert_int_equal(genstatic_main(5, two_few, err), 2);
    assert_int_equal(genstatic_main(7, unknown, err), 2);
    assert_int_equal(genstatic_main(6, missing, err), 2);
    fclose(err);
    assert_non_null(strstr(msgs, "usage:"));
    assert_non_null(strstr(msgs, "cannot read /nonexistent/list"));
    free(msgs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_good_list_writes_the_set_and_its_macros),
        cmocka_unit_test(the_index_is_perfect_for_small_and_large_sets),
        cmocka_unit_test(names_up_to_the_limit_are_accepted),
        cmocka_unit_test(exclude_leaves_out_the_other_lists_strings),
        cmocka_unit_test(duplicates_are_errors_with_both_lines),
        cmocka_unit_test(empty_lines_out_of_place_are_errors),
        cmocka_unit_test(bad_names_are_errors),
        cmocka_unit_test(bad_identifiers_are_errors),
        cmocka_unit_test(every_error_is_reported_not_just_the_first),
        cmocka_unit_test(an_empty_list_and_bad_usage_fail),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
