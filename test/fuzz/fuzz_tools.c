/* SPDX-License-Identifier: MIT */
/*
** fuzz_tools.c - libFuzzer target for the tools' input parsers: the list
** reader of atomtab-genstatic and the token reader of atomtab-report, both
** included here whole (their main()s compiled out), run on the input as
** the tools run them on a file, and checked against what their formats
** promise.
**
** Input: byte 0 picks the parser and its options; the rest is the file.
**   bit 0 clear: a genstatic list. parse_list, check_duplicates; a list
**     with no errors is laid out, indexed and written (to /dev/null) as the
**     tool would. Checks: every atom's name is valid UTF-8 without control
**     bytes and its identifier a C identifier of at most 63 characters;
**     names and identifiers are unique; the index is a perfect hash (each
**     atom in its own slot, where a lookup of its name lands).
**     bit 1: the file is two lists split at the first 0xff byte, the second
**     given as --exclude: no atom it names survives, and the others do.
**   bit 0 set: a report token file. intern_stream into a table; checks: one
**     token per non-empty line, in order, each the atom of that line's bytes
**     (NUL bytes included), equal lines one atom; the reports run; releasing
**     every token and a sweep leave the table empty.
**
** Built with -fsanitize=fuzzer (make fuzz-tools), or with -DFUZZ_STANDALONE
** as a replay driver of files and directories (make test replays the seed
** corpus test/fuzz/corpus-tools).
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* fmemopen; the tools' getline, strdup */
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GENSTATIC_NO_MAIN
#include "../../tools/atomtab-genstatic.c"
#undef CORPUS
#define usage report_usage   /* both tools have one */
#define REPORT_NO_MAIN
#include "../../tools/atomtab-report.c"
#undef usage

#define CHECK(c)                                                           \
    do {                                                                   \
        if (!(c)) {                                                        \
            fprintf(stderr, "fuzz_tools: check failed: %s (line %d)\n", #c, \
                    __LINE__);                                             \
            abort();                                                       \
        }                                                                  \
    } while (0)

static FILE *devnull(void)
{
    static FILE *f;
    if (!f)
        f = fopen("/dev/null", "w");
    CHECK(f != NULL);
    return f;
}

/* ---- genstatic lists ---- */

/* Reads one list from bytes, as load_list reads a file. */
static long list_from(gs_list *l, const uint8_t *p, size_t n, const char *name)
{
    memset(l, 0, sizeof *l);
    l->file = name;
    l->err = devnull();
    if (!n)
        return 0;   /* fmemopen wants a buffer: an empty list reads nothing */
    FILE *in = fmemopen((void *)(uintptr_t)p, n, "r");
    CHECK(in != NULL);
    parse_list(l, in);
    fclose(in);
    CHECK(l->read_errno == 0);
    return check_duplicates(l);
}

/* What the format promises of every atom a list without errors holds. */
static void check_atoms(const gs_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        const gs_atom *a = &l->v[i];
        CHECK(a->len <= ATAB_STATIC_MAXLEN && a->name[a->len] == '\0');
        CHECK(check_name(a->name, a->len) == NULL);
        CHECK(is_ident(a->id) && strlen(a->id) <= GS_MAX_ID);
        for (size_t j = 0; j < i && l->n <= 512; j++) {   /* quadratic: small lists */
            CHECK(a->len != l->v[j].len || memcmp(a->name, l->v[j].name, a->len) != 0);
            CHECK(strcmp(a->id, l->v[j].id) != 0);
        }
    }
}

/* Is the name in the list? */
static int list_has(const gs_list *l, const char *s, size_t len)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].len == len && memcmp(l->v[i].name, s, len) == 0)
            return 1;
    return 0;
}

/* The index is perfect: each atom's hash, displaced by its bucket's
** displacement, lands on a slot holding that atom; there are as many
** slots as atoms, or up to 63 more where none of the seeds placed them
** in fewer (build_index), the others empty. */
static void check_index(const gs_index *ix, const gs_list *l)
{
    size_t empty = 0;
    CHECK(ix->n_slots >= l->n && ix->n_slots - l->n < 64);
    for (uint32_t s = 0; s < ix->n_slots; s++)
        empty += ix->slots[s] == 0;
    CHECK(empty == ix->n_slots - l->n);
    for (size_t i = 0; i < l->n; i++) {
        uint64_t h = atab__static_hash(ix->seed, l->v[i].name, l->v[i].len);
        uint32_t b = atab__sh_bucket(h, ix->n_buckets);
        uint32_t s = atab__sh_slot(h, ix->disp[b], ix->n_slots);
        CHECK(ix->slots[s] == i + 1);
    }
}

static void fuzz_list(const uint8_t *p, size_t n, int exclude)
{
    gs_list l, ex;
    gs_index ix = {0, 0, 0, NULL, NULL};
    size_t n_ex = 0;
    const uint8_t *cut = exclude ? memchr(p, 0xff, n) : NULL;
    if (cut) {
        n_ex = n - (size_t)(cut - p) - 1;
        n = (size_t)(cut - p);
    }
    long bad = list_from(&l, p, n, "fuzz.atoms");
    if (bad == 0)
        check_atoms(&l);
    if (cut && bad == 0 && list_from(&ex, cut + 1, n_ex, "fuzz-exclude.atoms") == 0) {
        size_t kept = 0;
        for (size_t i = 0; i < l.n; i++)
            kept += !list_has(&ex, l.v[i].name, l.v[i].len);
        apply_exclude(&l, &ex);
        CHECK(l.n == kept);
        for (size_t i = 0; i < l.n; i++)
            CHECK(!list_has(&ex, l.v[i].name, l.v[i].len));
        free_list(&ex);
    } else if (cut && bad == 0) {
        free_list(&ex);
    }
    uint64_t total = 0;
    if (bad == 0 && l.n > 0 && layout(&l, &total) == 0 && build_index(&ix, &l) == 0) {
        gs_opts o;
        size_t maxlen = 0;
        memset(&o, 0, sizeof o);
        o.name = "fuzzset", o.macro = "FUZZ_ATOM", o.list = "fuzz.atoms";
        o.out_c = "fuzz.c", o.out_h = "fuzz.h";
        check_index(&ix, &l);
        for (size_t i = 0; i < l.n; i++)
            maxlen = l.v[i].len > maxlen ? l.v[i].len : maxlen;
        write_c(devnull(), &o, &l, &ix, total, maxlen);
        write_h(devnull(), &o, &l);
    }
    free_list(&l);
    free(ix.disp);
    free(ix.slots);
}

/* ---- report token files ---- */

static int null_writer(void *ud, const char *buf, size_t len)
{
    (void)ud; (void)buf; (void)len;
    return 0;
}

static void fuzz_tokens(const uint8_t *p, size_t n)
{
    held h = {0};
    atab_table *t = atab_table_new(NULL);
    CHECK(t != NULL);
    if (n) {
        FILE *in = fmemopen((void *)(uintptr_t)p, n, "r");
        CHECK(in != NULL);
        CHECK(intern_stream(t, in, "fuzz-tokens", &h) == 0);
        fclose(in);
    }
    size_t k = 0;
    for (size_t i = 0; i < n;) {   /* the lines, as the format says */
        const uint8_t *nl = memchr(p + i, '\n', n - i);
        size_t line = nl ? (size_t)(nl - (p + i)) : n - i;
        size_t len = line && p[i + line - 1] == '\r' ? line - 1 : line;   /* CRLF */
        if (len) {
            CHECK(k < h.n);
            CHECK(atab_len(h.a[k]) == len && memcmp(atab_chars(h.a[k]), p + i, len) == 0);
            CHECK(atab_lookup(t, (const char *)p + i, len) == h.a[k]);   /* one atom a string */
            atab_release(t, h.a[k]);   /* the lookup's reference */
            k++;
        }
        i += line + 1;
    }
    CHECK(k == h.n);
    CHECK(atab_count(t) <= h.n);
    CHECK(atab_report_tree(t, null_writer, NULL) == ATAB_OK);
    CHECK(atab_report_json(t, "fuzz", null_writer, NULL) == ATAB_OK);
    for (size_t i = 0; i < h.n; i++)
        CHECK(atab_release(t, h.a[i]) == ATAB_OK);
    atab_gc(t);
    CHECK(atab_count(t) == 0);
    free(h.a);
    atab_table_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0;
    if (data[0] & 1)
        fuzz_tokens(data + 1, size - 1);
    else
        fuzz_list(data + 1, size - 1, data[0] & 2);
    return 0;
}

#ifdef FUZZ_STANDALONE
/* ---- the replay driver: files and directories ---- */
#include "replay.h"

int main(int argc, char **argv)
{
    long files = 0;
    static uint8_t buf[1 << 20];
    for (int i = 1; i < argc; i++)
        files += replay_path("fuzz_tools", argv[i], buf, sizeof buf);
    printf("fuzz_tools: %ld files checked\n", files);
    return 0;
}
#endif
