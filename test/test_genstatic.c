/* SPDX-License-Identifier: MIT */
/*
** test_genstatic.c - the static set generator (tools/atomtab-genstatic.c,
** included here whole): good lists give a set whose index finds every
** atom; each kind of error in a list is reported with its line number;
** usage and I/O errors; --exclude; identifiers made from names; default-set
** atoms refused; names that would not compile refused; outputs replaced
** only through temporary files, and only when they are regular files.
*/
#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
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
    const char *names[] = {"list", "ex", "out.c", "out.h", "sock", "link"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        rm(names[i]);
    char sub[128];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    rmdir(sub);
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
    char *argv[] = {"gen", "--name", "tset", "--no-default", list, oc, oh, "--exclude", ex,
                    NULL};
    int argc = extra ? 9 : 7;
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

/* A UTF-8 byte-order mark (editors write one) starts the list, not its
** first name: "div" is the set's first atom, with no mark in it. */
static void a_byte_order_mark_before_the_list_is_skipped(void **state)
{
    (void)state;
    static const char text[] = "\xef\xbb\xbf" "div\n";
    char *msgs = NULL;
    assert_int_equal(run_gen(text, sizeof text - 1, &msgs, NULL), 0);
    assert_string_equal(msgs, "");
    free(msgs);
    char *h = read_out("out.h"), *c = read_out("out.c");
    assert_non_null(strstr(h, "tset__div = 0,"));
    assert_non_null(strstr(c, "\"div\""));
    assert_null(strstr(c, "\\357"));
    free(h);
    free(c);
    /* a mark alone (an editor's empty UTF-8 file) is an empty list */
    assert_int_equal(run_gen("\xef\xbb\xbf", 3, &msgs, NULL), 1);
    assert_non_null(strstr(msgs, "list: no atoms"));
    free(msgs);
}

/* A set records the ABI of the generator that wrote it as a number, not as
** the ATAB_STATIC_ABI macro, which would take the value of whatever header
** the set is compiled against: a set generated by another version and
** compiled against this header must still be refused with ATAB_EABI. */
static void a_set_records_its_generators_abi_as_a_number(void **state)
{
    (void)state;
    static const char text[] = "div\n";
    char *msgs = NULL, want[64];
    assert_int_equal(run_gen(text, sizeof text - 1, &msgs, NULL), 0);
    free(msgs);
    char *c = read_out("out.c");
    snprintf(want, sizeof want, "const atab_static_set tset = {\n    %uu, 1,",
             (unsigned)ATAB_STATIC_ABI);
    assert_non_null(strstr(c, want));
    assert_null(strstr(c, "ATAB_STATIC_ABI"));
    free(c);
}

/* The static index's hashes are part of a set's ABI: a set generated with
** other ones finds none of its atoms (every string then gets a dynamic
** twin). Values for ATAB_STATIC_ABI 2; a change to src/static_hash.h that
** moves one of them must bump ATAB_STATIC_ABI and update them. */
static void the_static_hashes_are_those_of_this_abi(void **state)
{
    (void)state;
    static const struct { const char *s; uint64_t h; uint32_t bit, bucket, slot; } v[] = {
        {"", UINT64_C(0xf75f04cbb5a1a1dd), 0, 709, 1737},
        {"a", UINT64_C(0x973d7f79fc81e7f3), 53348, 986, 1612},
        {"div", UINT64_C(0xda5a0cffcc906b48), 1480, 799, 3348},
        {"accept-charset", UINT64_C(0xdc67039faef5581d), 61335, 683, 2370},
        {"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", UINT64_C(0x63b1bf467d6d359b), 23269, 489,
         2999},
    };
    assert_int_equal(ATAB_STATIC_ABI, 2);
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        size_t n = strlen(v[i].s);
        uint64_t h = atab__static_hash(7, v[i].s, n);
        assert_true(h == v[i].h);
        assert_int_equal(atab__static_filter_bit(v[i].s, n, 16), v[i].bit);
        assert_int_equal(atab__sh_bucket(h, 1000), v[i].bucket);
        assert_int_equal(atab__sh_slot(h, 0x00030005u, 4001), v[i].slot);
    }
}

/* Builds the index of list l and looks each of its atoms up as static.c
** does; frees l and the index. 0 when the generator found no index; else
** *n_slots (when not NULL) receives its slot count. */
static int index_finds_its_list(gs_list *l, uint32_t *n_slots)
{
    gs_index ix = {0, 0, 0, NULL, NULL};
    uint64_t total;
    assert_int_equal(layout(l, &total), 0);
    int ok = build_index(&ix, l) == 0;
    for (size_t i = 0; ok && i < l->n; i++) {
        uint64_t h = atab__static_hash(ix.seed, l->v[i].name, l->v[i].len);
        uint32_t d = ix.disp[atab__sh_bucket(h, ix.n_buckets)];
        assert_int_equal(ix.slots[atab__sh_slot(h, d, ix.n_slots)], i + 1);
    }
    if (ok && n_slots)
        *n_slots = ix.n_slots;
    free_list(l);
    free(ix.disp);
    free(ix.slots);
    return ok;
}

/* Builds the index for n synthetic names and looks every one up the way
** static.c does. */
static void index_finds_every_key(size_t n)
{
    gs_list l;
    char name[32];
    uint32_t n_slots;
    memset(&l, 0, sizeof l);
    for (size_t i = 0; i < n; i++) {
        int k = snprintf(name, sizeof name, "atom-%zu", i * 7919);
        assert_int_equal(push_atom(&l, name, (size_t)k, "x", (long)i + 1, 0), 0);
    }
    assert_true(index_finds_its_list(&l, &n_slots));
    assert_int_equal(n_slots, n);
}

static void the_index_is_perfect_for_small_and_large_sets(void **state)
{
    (void)state;
    size_t sizes[] = {1, 2, 3, 5, 64, 1000, 10000};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        index_finds_every_key(sizes[i]);
}

/* Builds the index of the names fmt gives for list t, entries 0..n-1, and
** looks each up as static.c does; 0 when the generator finds no index. */
static int index_of_list_finds_every_key(const char *fmt, int t, size_t n)
{
    gs_list l;
    char name[32];
    memset(&l, 0, sizeof l);
    for (size_t i = 0; i < n; i++) {
        int k = snprintf(name, sizeof name, fmt, t, i);
        assert_int_equal(push_atom(&l, name, (size_t)k, "x", (long)i + 1, 0), 0);
    }
    return index_finds_its_list(&l, NULL);
}

/* With as many slots as atoms, a list of 8 or 16 names has a slot count
** that is a power of two: the displacements (f1 + d1 * f2 + d2) % n_slots,
** f2 odd, then move a bucket's keys only by even steps apart, and about 1
** list in 1,700 of 8 names (1 in 10,000 of 16) had no index under any of
** the 64 seeds. The generator refused such ordinary lists. */
static void lists_of_eight_and_sixteen_names_always_get_an_index(void **state)
{
    (void)state;
    static const char text[] = "w1239-0\nw1239-1\nw1239-2\nw1239-3\n"
                               "w1239-4\nw1239-5\nw1239-6\nw1239-7\n";
    char *msgs = NULL;
    int rc = run_gen(text, sizeof text - 1, &msgs, NULL);
    if (rc != 0)
        fail_msg("8 names w1239-0..7: exit %d: %s", rc, msgs);
    free(msgs);
    for (int t = 0; t < 6000; t++) {
        if (!index_of_list_finds_every_key("w%d-%zu", t, 8))
            fail_msg("no index for the 8 names w%d-0 .. w%d-7", t, t);
        if (!index_of_list_finds_every_key("item%d_%zu", t, 8))
            fail_msg("no index for the 8 names item%d_0 .. item%d_7", t, t);
        if (!index_of_list_finds_every_key("w%d-%zu", t, 16))
            fail_msg("no index for the 16 names w%d-0 .. w%d-15", t, t);
    }
}

/* Two 16-byte names of printable ASCII whose index hashes under `seed`
** are equal, so that no displacement parts them: the first words differ,
** the second word of b undoes the difference the first words made. */
static void colliding_pair(uint64_t seed, char a[17], char b[17])
{
    uint64_t h0 = seed ^ (16 * ATAB__SH_K1), x = 0, w1, w1b;
    unsigned char w2[8], w2b[8];
    snprintf(a, 17, "k%02u-%04x", (unsigned)seed % 100, 0u);
    memcpy(&w1, a, 8);
    for (unsigned j = 0;; j++) {   /* a difference whose bytes two printable bytes make */
        assert_true(j < 0x10000);
        snprintf(b, 17, "k%02u+%04x", (unsigned)seed % 100, j);
        memcpy(&w1b, b, 8);
        x = atab__sh_mix(h0 ^ w1) ^ atab__sh_mix(h0 ^ w1b);
        if (!(x & UINT64_C(0x8080808080808080)))
            break;
    }
    for (int i = 0; i < 8; i++) {
        unsigned d = (unsigned)(x >> (8 * i)) & 0x7f, c = 0x21;
        while ((c ^ d) < 0x21 || (c ^ d) > 0x7e)
            c++;
        w2[i] = (unsigned char)c, w2b[i] = (unsigned char)(c ^ d);
    }
    memcpy(a + 8, w2, 8), memcpy(b + 8, w2b, 8);
    a[16] = b[16] = '\0';
    assert_int_equal(atab__static_hash(seed, a, 16), atab__static_hash(seed, b, 16));
}

/* A list made of one colliding pair for each of the seeds the generator
** tries first still gets an index, and the set it writes finds them all. */
static void a_list_made_to_collide_under_the_first_seeds_gets_an_index(void **state)
{
    (void)state;
    enum { SEEDS = 64 };
    char *text = malloc(SEEDS * 2 * 32), *p = text, a[17], b[17], *msgs = NULL;
    gs_list l;
    assert_non_null(text);
    memset(&l, 0, sizeof l);
    for (unsigned s = 0; s < SEEDS; s++) {
        colliding_pair(s, a, b);
        p += sprintf(p, "%s p%ua\n%s p%ub\n", a, s, b, s);
        assert_int_equal(push_atom(&l, a, 16, "x", 2 * s + 1, 0), 0);
        assert_int_equal(push_atom(&l, b, 16, "x", 2 * s + 2, 0), 0);
    }
    int rc = run_gen(text, (size_t)(p - text), &msgs, NULL);
    if (rc != 0)
        fail_msg("a list colliding under seeds 0..%d: exit %d: %s", SEEDS - 1, rc, msgs);
    free(msgs);
    assert_true(index_finds_its_list(&l, NULL));
    free(text);
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
    EXPECT_ERROR("a\ncaf\xc3\xa9\n", 2, "'caf\xc3\xa9' has no identifier of its own");
    EXPECT_ERROR("\"\"\n", 1, "'' has no identifier of its own");
    EXPECT_ERROR("data-id 1x\n", 1, "'1x' is not a C identifier");
    EXPECT_ERROR("a\nb c-d\n", 2, "'c-d' is not a C identifier");
    EXPECT_ERROR("a b c\n", 1, "text after the identifier: 'c'");
    EXPECT_ERROR("a\nx aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", 2,
                 "identifier too long");
}

static void every_error_is_reported_not_just_the_first(void **state)
{
    (void)state;
    static const char text[] = "a\na\n x\n\n\ny-z 1q\n";
    char *msgs = NULL;
    assert_int_equal(run_gen(text, sizeof text - 1, &msgs, NULL), 1);
    assert_non_null(strstr(msgs, "list:2: duplicate name"));
    assert_non_null(strstr(msgs, "list:3: leading whitespace"));
    assert_non_null(strstr(msgs, "list:5: two empty lines"));
    assert_non_null(strstr(msgs, "list:6: '1q' is not a C identifier"));
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

/* ---- identifiers made from names ---- */

static void identifiers_are_made_as_the_default_sets_are(void **state)
{
    (void)state;
    static const char text[] = "my-widget\n2d\na.b:c\nx-y explicit_id\n";
    char *msgs = NULL;
    assert_int_equal(run_gen(text, sizeof text - 1, &msgs, NULL), 0);
    free(msgs);
    char *h = read_out("out.h");
    assert_non_null(strstr(h, "tset__my_widget = 0,"));
    assert_non_null(strstr(h, "tset___2d = "));
    assert_non_null(strstr(h, "tset__a_b_c = "));
    assert_non_null(strstr(h, "tset__explicit_id = "));
    free(h);
    EXPECT_ERROR("a-b\na_b\n", 2, "duplicate identifier 'a_b' (first on line 1): made from");
}

/* ---- the default set ---- */

/* Runs on `text` with "ex" as the default set's list (and `no_default`). */
static int run_with_default(const char *text, const char *def, int no_default, char **msgs)
{
    char list[128], oc[128], oh[128], ex[128];
    size_t n = 0;
    FILE *err = open_memstream(msgs, &n);
    snprintf(list, sizeof list, "%s/list", dir);
    snprintf(oc, sizeof oc, "%s/out.c", dir);
    snprintf(oh, sizeof oh, "%s/out.h", dir);
    snprintf(ex, sizeof ex, "%s/ex", dir);
    write_file("list", text, strlen(text));
    write_file("ex", def, strlen(def));
    char *argv[] = {"gen", "--name", "tset", "--default-list", ex, list, oc, oh,
                    "--no-default", NULL};
    int rc = genstatic_main(no_default ? 9 : 8, argv, err);
    fclose(err);
    return rc;
}

static void an_atom_of_the_default_set_is_an_error_unless_no_default(void **state)
{
    (void)state;
    char *msgs = NULL;
    assert_int_equal(run_with_default("mine\ndiv\nalso-mine\nspan\n", "div\nspan s\n", 0,
                                      &msgs), 1);
    assert_non_null(strstr(msgs, "/list:2: 'div' is in the default set (ATAB_ATOM(div)"));
    assert_non_null(strstr(msgs, "/list:4: 'span' is in the default set (ATAB_ATOM(s)"));
    assert_null(strstr(msgs, "list:1:"));
    free(msgs);
    assert_int_equal(run_with_default("mine\ndiv\n", "div\n", 1, &msgs), 0);
    assert_string_equal(msgs, "");
    free(msgs);
    assert_int_equal(run_with_default("mine\n", "div\n", 0, &msgs), 0);   /* no overlap */
    free(msgs);
    char *argv[] = {"gen", "--name", "tset", "--default-list", "/nonexistent/default.atoms",
                    "/dev/null", "o.c", "o.h", NULL};
    size_t n;
    FILE *err = open_memstream(&msgs, &n);
    assert_int_equal(genstatic_main(8, argv, err), 2);
    fclose(err);
    assert_non_null(strstr(msgs, "cannot read /nonexistent/default.atoms"));
    free(msgs);
}

/* The default list's file name is data, not a format: a name with '%'
** conversions in it (here %s and %n) is printed as it is in the message
** for a default-set atom, never read as conversions by fprintf (which,
** with no arguments for them, read and write through garbage). */
static void a_default_list_named_with_percent_signs_is_printed_as_is(void **state)
{
    (void)state;
    char list[128], oc[128], oh[128], def[128];
    char *msgs = NULL;
    size_t n = 0;
    snprintf(list, sizeof list, "%s/list", dir);
    snprintf(oc, sizeof oc, "%s/out.c", dir);
    snprintf(oh, sizeof oh, "%s/out.h", dir);
    snprintf(def, sizeof def, "%s/d%%s%%s%%s%%n%%s%%s.atoms", dir);
    write_file("list", "mine\ndiv\n", 9);
    write_file("d%s%s%s%n%s%s.atoms", "div\nspan\n", 9);
    char *argv[] = {"gen", "--name", "tset", "--default-list", def, list, oc, oh, NULL};
    FILE *err = open_memstream(&msgs, &n);
    assert_int_equal(genstatic_main(8, argv, err), 1);
    fclose(err);
    rm("d%s%s%s%n%s%s.atoms");
    assert_non_null(strstr(msgs, "/list:2: 'div' is in the default set (ATAB_ATOM(div), "
                                 "d%s%s%s%n%s%s.atoms line 1)"));
    free(msgs);
}

/* ---- names that would not compile ---- */

/* The exit status for --name NAME [--macro MACRO] on a one-atom list,
** with OUT.c and OUT.h as given (relative to the scratch directory). */
static int run_names(const char *name, const char *macro, const char *oc_name,
                     const char *oh_name, char **msgs)
{
    char list[128], oc[128], oh[128];
    size_t n = 0;
    FILE *err = open_memstream(msgs, &n);
    snprintf(list, sizeof list, "%s/list", dir);
    snprintf(oc, sizeof oc, "%s/%s", dir, oc_name);
    snprintf(oh, sizeof oh, "%s/%s", dir, oh_name);
    write_file("list", "x\n", 2);
    char *argv[] = {"gen", "--no-default", "--name", (char *)name, list, oc, oh,
                    "--macro", (char *)macro, NULL};
    int rc = genstatic_main(macro ? 9 : 7, argv, err);
    fclose(err);
    return rc;
}

/* Each of the n names is refused (exit 2, the option named in the
** message) as --name and as --macro. */
static void refused_as_name_and_macro(const char *const *bad, size_t n)
{
    char *msgs;
    for (size_t i = 0; i < n; i++) {
        if (run_names(bad[i], NULL, "out.c", "out.h", &msgs) != 2 ||
            !strstr(msgs, "--name "))
            fail_msg("--name %s: %s", bad[i], msgs);
        free(msgs);
        if (run_names("ok", bad[i], "out.c", "out.h", &msgs) != 2 ||
            !strstr(msgs, "--macro "))
            fail_msg("--macro %s: %s", bad[i], msgs);
        free(msgs);
    }
}

static void names_that_would_not_compile_are_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {"int", "for", "class", "bool", "atab_atom",
                                      "ATAB_X", "__x", "_Set", "9x", "a-b"};
    char *msgs;
    refused_as_name_and_macro(bad, sizeof bad / sizeof *bad);
    assert_int_equal(run_names("ok", "ok_ATOM", "out.c", "out.h", &msgs), 2);   /* NAME_* */
    free(msgs);
    assert_int_equal(run_names("ok", "ok", "out.c", "out.h", &msgs), 2);
    free(msgs);
    /* the library's own set, and only it, keeps its atab_ names */
    assert_int_equal(run_names("atab_static_default", "ATAB_ATOM", "out.c", "out.h", &msgs), 0);
    free(msgs);
    assert_int_equal(run_names("atab_static_default", "ATAB_OTHER", "out.c", "out.h", &msgs),
                     2);
    free(msgs);
}

/* The generated files include <stddef.h> and <stdint.h> (through
** atomtab.h): names those headers declare or reserve (C11 7.1.3, 7.31.10)
** cannot be the set's or its macro's. `--name uint32_t` wrote
** `extern const atab_static_set uint32_t;`, `--name NULL` and `--macro
** UINT64_C` code that does not compile. Names that only look alike stay. */
static void names_the_standard_headers_reserve_are_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {"uint32_t", "size_t", "NULL", "INT8_MAX", "SIZE_MAX",
                                      "intptr_t", "max_align_t", "ptrdiff_t", "uint_fast16_t",
                                      "offsetof", "UINT64_C", "INTMAX_C", "WCHAR_MAX",
                                      "nullptr_t", "SIZE_WIDTH", "unreachable"};
    char *msgs;
    refused_as_name_and_macro(bad, sizeof bad / sizeof *bad);
    static const char *const good[] = {"interned_t0", "int_set", "uint", "INT_ATOMS",
                                       "my_uint32_t_set", "SIZE"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        if (run_names(good[i], NULL, "out.c", "out.h", &msgs) != 0)
            fail_msg("--name %s: %s", good[i], msgs);
        free(msgs);
    }
}

static void one_path_for_both_outputs_or_an_input_is_refused(void **state)
{
    (void)state;
    char *msgs, sub[128];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    assert_true(mkdir(sub, 0755) == 0 || errno == EEXIST);
    assert_int_equal(run_names("ok", NULL, "out.c", "out.c", &msgs), 2);
    assert_non_null(strstr(msgs, "are the same file"));
    free(msgs);
    assert_int_equal(run_names("ok", NULL, "out.c", "sub/../out.c", &msgs), 2);
    free(msgs);
    assert_int_equal(run_names("ok", NULL, "list", "out.h", &msgs), 2);
    assert_non_null(strstr(msgs, "both an input and an output"));
    free(msgs);
    char *list = read_out("list");
    assert_string_equal(list, "x\n");   /* untouched */
    free(list);
    assert_int_equal(run_names("ok", NULL, "out.c", "out.h", &msgs), 0);
    free(msgs);
}

/* OUT.h's file name is data too: the generated OUT.c names it in an
** #include "..." line, where a '"' (or a '\\' or a newline) cannot be
** written, so such a name is refused (exit 2, nothing written) rather
** than giving an OUT.c that includes another file (here "o") or does not
** compile. */
static void an_out_h_the_generated_include_cannot_name_is_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {"o\"h.h", "o\\h.h", "o\nh.h"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *msgs;
        int rc = run_names("ok", NULL, "out.c", bad[i], &msgs);
        rm(bad[i]);
        if (rc != 2) {
            char *c = rc == 0 ? read_out("out.c") : NULL;
            const char *inc = c ? strstr(c, "#include \"") : NULL;
            fail_msg("OUT.h %s: exit %d, not 2: %.*s", bad[i], rc,
                     inc ? (int)strcspn(inc + 10, "\n") + 10 : 0, inc ? inc : "");
        }
        free(msgs);
    }
    char *msgs;
    assert_int_equal(run_names("ok", NULL, "out.c", "o'h.h", &msgs), 0);   /* writable */
    rm("o'h.h");
    free(msgs);
}

/* ---- outputs: only regular files, replaced through temporaries ---- */

static int exists(const char *name, mode_t type)
{
    char p[128];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return lstat(p, &st) == 0 && (st.st_mode & S_IFMT) == type;
}

static void outputs_that_are_not_regular_files_are_refused_and_kept(void **state)
{
    (void)state;
    char p[128], *msgs;
    snprintf(p, sizeof p, "%s/sub", dir);
    assert_true(mkdir(p, 0755) == 0 || errno == EEXIST);   /* an empty directory */
    assert_int_equal(run_names("ok", NULL, "out.c", "sub", &msgs), 2);
    assert_non_null(strstr(msgs, "not a regular file"));
    free(msgs);
    assert_true(exists("sub", S_IFDIR));
    struct sockaddr_un sa = {.sun_family = AF_UNIX};   /* a socket: fopen fails */
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s/sock", dir);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(run_names("ok", NULL, "sock", "out.h", &msgs), 2);
    free(msgs);
    close(fd);
    assert_true(exists("sock", S_IFSOCK));
    write_file("out.h", "old h\n", 6);   /* a symlink to a regular file */
    snprintf(p, sizeof p, "%s/out.h", dir);
    char l[128];
    snprintf(l, sizeof l, "%s/link", dir);
    assert_int_equal(symlink(p, l), 0);
    assert_int_equal(run_names("ok", NULL, "out.c", "link", &msgs), 2);
    free(msgs);
    assert_true(exists("link", S_IFLNK));
    char *h = read_out("out.h");
    assert_string_equal(h, "old h\n");
    free(h);
}

/* Temporary files left beside out.c and out.h (out.c.XXXXXX). */
static int stray_files(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "out.c.", 6) == 0 || strncmp(e->d_name, "out.h.", 6) == 0)
            n++;
    closedir(d);
    return n;
}

static void a_failed_write_leaves_the_old_outputs_and_no_temporaries(void **state)
{
    (void)state;
    write_file("out.c", "old c\n", 6);
    write_file("out.h", "old h\n", 6);
    pid_t pid = fork();
    if (pid == 0) {   /* writes past 256 bytes fail with EFBIG */
        struct rlimit rl = {256, 256};
        char *msgs;
        signal(SIGXFSZ, SIG_IGN);
        setrlimit(RLIMIT_FSIZE, &rl);
        _exit(run_names("ok", NULL, "out.c", "out.h", &msgs));   /* out.h alone is more */
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 2);
    char *c = read_out("out.c"), *h = read_out("out.h");
    assert_string_equal(c, "old c\n");
    assert_string_equal(h, "old h\n");
    free(c);
    free(h);
    assert_int_equal(stray_files(), 0);
    char *msgs;   /* without the limit the same run replaces both */
    assert_int_equal(run_names("ok", NULL, "out.c", "out.h", &msgs), 0);
    free(msgs);
    c = read_out("out.c");
    assert_non_null(strstr(c, "const atab_static_set ok = {"));
    free(c);
    assert_int_equal(stray_files(), 0);
    assert_true(exists("out.c", S_IFREG));
}

static void a_list_that_cannot_be_read_is_an_io_error(void **state)
{
    (void)state;
    char *argv[] = {"gen", "--name", "x", "--no-default", dir, "o.c", "o.h", NULL};
    char *msgs = NULL;
    size_t n;
    FILE *err = open_memstream(&msgs, &n);
    assert_int_equal(genstatic_main(7, argv, err), 2);   /* a directory: EISDIR */
    fclose(err);
    assert_non_null(strstr(msgs, "cannot read"));
    assert_non_null(strstr(msgs, strerror(EISDIR)));
    free(msgs);
}

static void help_names_every_option(void **state)
{
    (void)state;
    static const char *const opts[] = {"--name", "--macro", "--export", "--exclude",
                                       "--no-default", "--default-list", "--help"};
    for (size_t i = 0; i < sizeof opts / sizeof *opts; i++)
        assert_non_null(strstr(help, opts[i]));
    FILE *saved = stdout;
    char *out = NULL;
    size_t n;
    stdout = open_memstream(&out, &n);
    char *argv[] = {"gen", "--help", NULL};
    int rc = genstatic_main(2, argv, stderr);
    fclose(stdout);
    stdout = saved;
    assert_int_equal(rc, 0);
    assert_string_equal(out, help);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_good_list_writes_the_set_and_its_macros),
        cmocka_unit_test(a_byte_order_mark_before_the_list_is_skipped),
        cmocka_unit_test(a_set_records_its_generators_abi_as_a_number),
        cmocka_unit_test(the_static_hashes_are_those_of_this_abi),
        cmocka_unit_test(the_index_is_perfect_for_small_and_large_sets),
        cmocka_unit_test(lists_of_eight_and_sixteen_names_always_get_an_index),
        cmocka_unit_test(a_list_made_to_collide_under_the_first_seeds_gets_an_index),
        cmocka_unit_test(names_up_to_the_limit_are_accepted),
        cmocka_unit_test(exclude_leaves_out_the_other_lists_strings),
        cmocka_unit_test(duplicates_are_errors_with_both_lines),
        cmocka_unit_test(empty_lines_out_of_place_are_errors),
        cmocka_unit_test(bad_names_are_errors),
        cmocka_unit_test(bad_identifiers_are_errors),
        cmocka_unit_test(every_error_is_reported_not_just_the_first),
        cmocka_unit_test(an_empty_list_and_bad_usage_fail),
        cmocka_unit_test(identifiers_are_made_as_the_default_sets_are),
        cmocka_unit_test(an_atom_of_the_default_set_is_an_error_unless_no_default),
        cmocka_unit_test(a_default_list_named_with_percent_signs_is_printed_as_is),
        cmocka_unit_test(names_that_would_not_compile_are_refused),
        cmocka_unit_test(names_the_standard_headers_reserve_are_refused),
        cmocka_unit_test(one_path_for_both_outputs_or_an_input_is_refused),
        cmocka_unit_test(an_out_h_the_generated_include_cannot_name_is_refused),
        cmocka_unit_test(outputs_that_are_not_regular_files_are_refused_and_kept),
        cmocka_unit_test(a_failed_write_leaves_the_old_outputs_and_no_temporaries),
        cmocka_unit_test(a_list_that_cannot_be_read_is_an_io_error),
        cmocka_unit_test(help_names_every_option),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
