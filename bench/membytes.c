/* SPDX-License-Identifier: MIT */
/*
** membytes.c - bytes per distinct atom on a token stream, for atomtab,
** GLib's g_intern_string and libxml2's xmlDictLookup, measured the same
** way: jemalloc's stats.allocated (usable sizes, so slop included) before
** and after interning the whole stream, each interner in a fresh forked
** process. This program links jemalloc, so GLib's and libxml2's malloc is
** jemalloc too. Also: atomtab's own memory report checked against that
** delta, and how jemalloc's size classes (nallocx) fall for other header
** sizes.
**
** Built with -DMEMBYTES_LIBC (membytes-libc) it runs on the C library's
** malloc instead: bytes are glibc's mallinfo2() in-use bytes (uordblks +
** hblkhd: chunk sizes, so the 8-byte chunk headers included), which the
** report's explicit total (usable sizes plus its heap-overhead entry, the
** chunk headers) is checked against. There each interner's work runs in a
** thread of its own, after a thread that made and freed a table: glibc's
** per-thread cache (tcache) keeps freed blocks, still counted in use,
** until its thread exits; and a process's first thread and table cost
** glibc a few blocks once (a thread's arena, its cache), not the table.
**
** atomtab's table is sized by where the hash puts the keys, so its bytes
** move with the seed (overhead per atom 27.5-27.9 over random seeds on the
** bundled corpus): the seed is fixed, MEMBYTES_SEED or 1, so that a figure
** repeats and two builds compare.
**
** usage: membytes [--json] FILE   (one token per line; empty lines skipped)
** --json prints the same figures as one JSON object (make bench-plots
** draws atomtab's split from it): per interner its bytes, bytes and
** overhead per distinct token; for atomtab the split per dynamic atom
** (header, chars+NUL, slop, table) and the report's heap total; with
** jemalloc, the slop by header size.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>
#ifdef MEMBYTES_LIBC
#include <malloc.h>
#include <pthread.h>
#else
#include <jemalloc/jemalloc.h>
#endif
#include <libxml/xmlstring.h>
#include <libxml/dict.h>

#include "atab_int.h"   /* ATAB__TABLE_ALLOC, for the size-class notes */
#include "tokens.h"

static double *table_share;   /* shared with the atomtab child */
static int json;              /* --json: one object instead of the tables */

typedef struct corpus {
    tokens k;           /* NUL-terminated tokens, in stream order */
    const char **tok;   /* k.s */
    size_t *len;        /* k.len */
    size_t n;           /* tokens */
    size_t distinct;    /* distinct tokens */
    size_t chars;       /* sum of len + 1 over distinct tokens */
} corpus;

#ifdef MEMBYTES_LIBC
#define ALLOCATOR_NAME "glibc malloc"
/* Live bytes by glibc's count: in-use chunks of the arenas plus mmapped
** blocks. */
static size_t allocated(void)
{
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
}
#else
#define ALLOCATOR_NAME "jemalloc"
/* Live bytes by jemalloc's count: flush this thread's cache (cached
** blocks count as allocated), write epoch, read stats.allocated. */
static size_t allocated(void)
{
    uint64_t epoch = 1;
    size_t v = 0, len = sizeof v;
    mallctl("thread.tcache.flush", NULL, NULL, NULL, 0);
    mallctl("epoch", NULL, NULL, &epoch, sizeof epoch);
    if (mallctl("stats.allocated", &v, &len, NULL, 0) != 0) {
        fprintf(stderr, "membytes: jemalloc has no stats.allocated\n");
        exit(1);
    }
    return v;
}
#endif

static int cmp_tok(const void *a, const void *b)
{
    const char *const *x = a, *const *y = b;
    return strcmp(*x, *y);
}

/* Reads FILE; splits it into tokens and counts the distinct ones. */
static void load(const char *path, corpus *c)
{
    tokens_load(path, &c->k, "membytes");
    c->tok = c->k.s;
    c->len = c->k.len;
    c->n = c->k.n;
    const char **sorted = malloc(c->n * sizeof *sorted);
    memcpy(sorted, c->tok, c->n * sizeof *sorted);
    qsort(sorted, c->n, sizeof *sorted, cmp_tok);
    c->distinct = c->chars = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (i > 0 && strcmp(sorted[i], sorted[i - 1]) == 0)
            continue;
        c->distinct++;
        c->chars += strlen(sorted[i]) + 1;
    }
    free(sorted);
}

/* One interner's line (or, with --json, its object, left open for
** atomtab's split: close_row ends it). */
static void print_row(const corpus *c, const char *name, const char *api, size_t total)
{
    double n = (double)c->distinct;
    if (json)
        printf("    {\"name\": \"%s\", \"api\": \"%s\", \"bytes\": %zu, \"per_token\": %.2f, "
               "\"overhead\": %.2f", name, api, total, total / n, (total - c->chars) / n);
    else
        printf("%-22s %10zu %10.2f %10.2f %10.2f\n", api, total, total / n,
               c->chars / n, (total - c->chars) / n);
}

static void close_row(void)
{
    if (json)
        printf("}");
}

/* ---- atomtab, with the split from its own report ---- */

typedef struct split {
    int64_t table, objects, slop, free_, heap_overhead, explicit_total;
} split;

static int take(void *ud, const char *path, int kind, int units, int64_t amount,
                const char *desc)
{
    split *s = ud;
    (void)kind; (void)units; (void)desc;
    if (strncmp(path, "explicit/", 9) == 0)
        s->explicit_total += amount;
    if (strcmp(path, "explicit/atoms/table") == 0)
        s->table = amount;
    else if (strcmp(path, "explicit/atoms/dynamic/atom-objects") == 0)
        s->objects = amount;
    else if (strcmp(path, "explicit/atoms/dynamic/slop") == 0)
        s->slop = amount;
    else if (strcmp(path, "explicit/atoms/dynamic/free") == 0 ||
             strcmp(path, "explicit/atoms/dynamic/recycled") == 0)
        s->free_ += amount;   /* chunk bytes no atom holds */
    else if (strcmp(path, "explicit/heap-overhead/atoms") == 0)
        s->heap_overhead = amount;
    return 0;
}

#ifdef MEMBYTES_LIBC
/* Runs fn(c) in a thread of its own (see the file's header). */
typedef struct job {
    void (*fn)(const corpus *);
    const corpus *c;
} job;

static void *job_main(void *arg)
{
    job *j = arg;
    j->fn(j->c);
    return NULL;
}

static void warm(const corpus *c)
{
    (void)c;
    free(malloc(1));
    atab_table_free(atab_table_new(NULL));
}

static void in_thread(void (*fn)(const corpus *), const corpus *c)
{
    job j = {fn, c};
    pthread_t th;
    if (pthread_create(&th, NULL, job_main, &j) != 0 || pthread_join(th, NULL) != 0) {
        fprintf(stderr, "membytes: no thread\n");
        exit(1);
    }
}

/* fn's bytes by glibc's count, fn run as the file's header says. */
static size_t measure(void (*fn)(const corpus *), const corpus *c)
{
    in_thread(warm, c);
    size_t before = allocated();
    in_thread(fn, c);
    return allocated() - before;
}
#else
static size_t measure(void (*fn)(const corpus *), const corpus *c)
{
    size_t before = allocated();
    fn(c);
    return allocated() - before;
}
#endif

static atab_table *the_table;   /* atomtab's, for the report after measuring */

static void intern_atomtab(const corpus *c)
{
    atab_options o;
    memset(&o, 0, sizeof o);
    o.flags = ATAB_FIXED_SEED;
    o.seed = getenv("MEMBYTES_SEED") ? strtoull(getenv("MEMBYTES_SEED"), NULL, 0) : 1;
    the_table = atab_table_new(&o);
    for (size_t i = 0; i < c->n; i++)
        atab_intern(the_table, c->tok[i], c->len[i]);   /* a reference kept per token */
}

static void run_atomtab(const corpus *c)
{
    size_t total = measure(intern_atomtab, c);
    atab_table *t = the_table;
    split s = {0, 0, 0, 0, 0, 0};
    atab_stats st;
    atab_report(t, take, &s);
    atab_get_stats(t, &st);
    print_row(c, "atomtab", "atomtab atab_intern", total);
    double n = (double)st.atoms;
    double header = (double)sizeof(atab_atom);
    long long report = (long long)s.explicit_total;
    *table_share = s.table / n;
    if (json) {
        printf(", \"split\": {\"atoms\": %zu, \"slots\": %zu, \"header\": %.2f, "
               "\"chars\": %.2f, \"slop\": %.2f, \"free\": %.2f, \"heap_overhead\": %.2f, "
               "\"table\": %.2f, \"report_bytes\": %lld}}",
               st.atoms, st.capacity, header, s.objects / n - header, s.slop / n,
               s.free_ / n, s.heap_overhead / n, s.table / n, report);
        return;
    }
    printf("  atomtab split per atom: header %.2f + chars+NUL %.2f + slop %.2f"
           " + chunks' free %.2f + allocator overhead %.2f + table %.2f = %.2f;\n"
           "    overhead (all but chars+NUL) %.2f\n",
           header, s.objects / n - header, s.slop / n, s.free_ / n, s.heap_overhead / n,
           s.table / n, (s.objects + s.slop + s.free_ + s.heap_overhead + s.table) / n,
           header + (s.slop + s.free_ + s.heap_overhead + s.table) / n);
    printf("  atomtab report explicit total %lld vs " ALLOCATOR_NAME " delta %zu: %s\n",
           report, total, (size_t)report == total ? "equal" : "DIFFERENT");
#ifndef MEMBYTES_LIBC
    printf("  atomtab table: %zu slots for %zu atoms (load %.2f), object %zu B"
           " requested -> %zu B class\n", st.capacity, st.atoms,
           (double)st.atoms / (double)st.capacity, (size_t)ATAB__TABLE_ALLOC,
           nallocx(ATAB__TABLE_ALLOC, 0));
    printf("  (jemalloc keeps no header per block: no allocator overhead entry)\n");
#else
    printf("  (glibc: the allocator overhead is each block's chunk header, which\n"
           "   mallinfo2 counts and malloc_usable_size leaves out)\n");
#endif
}

static void intern_glib(const corpus *c)
{
    for (size_t i = 0; i < c->n; i++)
        g_intern_string(c->tok[i]);
}

static void run_glib(const corpus *c)
{
    print_row(c, "glib", "GLib g_intern_string", measure(intern_glib, c));
    close_row();
}

static xmlDictPtr the_dict;

static void intern_libxml2(const corpus *c)
{
    the_dict = xmlDictCreate();
    for (size_t i = 0; i < c->n; i++)
        xmlDictLookup(the_dict, (const xmlChar *)c->tok[i], (int)c->len[i]);
}

static void run_libxml2(const corpus *c)
{
    size_t total = measure(intern_libxml2, c);
    xmlDictPtr d = the_dict;
    print_row(c, "libxml2", "libxml2 xmlDictLookup", total);
    close_row();
    if ((size_t)xmlDictSize(d) != c->distinct)
        fprintf(json ? stderr : stdout, "  libxml2: dict holds %d names, expected %zu\n",
                xmlDictSize(d), c->distinct);
    xmlDictFree(d);
}

/* Runs fn in a fresh process (GLib's table is global; each interner
** starts from a clean heap). */
static void in_child(void (*fn)(const corpus *), const corpus *c)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        fn(c);
        fflush(stdout);
        _exit(0);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
        fprintf(stderr, "membytes: a measurement failed\n");
        exit(1);
    }
}

#ifndef MEMBYTES_LIBC
/* Average slop per distinct atom if atoms had an h-byte header, at
** jemalloc's size classes and at an exact 8-byte granularity. */
static void size_classes(const corpus *c)
{
    const char **sorted = malloc(c->n * sizeof *sorted);
    memcpy(sorted, c->tok, c->n * sizeof *sorted);
    qsort(sorted, c->n, sizeof *sorted, cmp_tok);
    if (json)
        printf(",\n  \"slop_by_header\": [");
    else
        printf("\nslop per atom by header size (jemalloc nallocx | 8-byte granularity):\n");
    for (size_t h = 4; h <= 16; h += 4) {
        double je = 0, g8 = 0;
        for (size_t i = 0; i < c->n; i++) {
            if (i > 0 && strcmp(sorted[i], sorted[i - 1]) == 0)
                continue;
            size_t req = h + strlen(sorted[i]) + 1;
            je += (double)(nallocx(req, 0) - req);
            g8 += (double)(((req + 7) & ~(size_t)7) - req);
        }
        je /= (double)c->distinct;
        g8 /= (double)c->distinct;
        if (json) {
            printf("%s{\"header\": %zu, \"slop\": %.2f, \"slop_8byte\": %.2f}",
                   h > 4 ? ", " : "", h, je, g8);
            continue;
        }
        printf("  header %2zu: slop %5.2f | %5.2f   overhead with today's table share"
               " (%.2f): %5.2f | %5.2f\n", h, je, g8, *table_share,
               (double)h + je + *table_share, (double)h + g8 + *table_share);
    }
    if (json)
        printf("]");
    free(sorted);
}
#endif

/* --json: the rows as one object, each interner still in its own process. */
static int print_json(const corpus *c, const char *path)
{
    printf("{\"allocator\": \"%s\", \"file\": \"%s\", \"tokens\": %zu, \"distinct\": %zu, "
           "\"chars_per_token\": %.2f, \"unit\": \"bytes\",\n  \"interners\": [\n",
           ALLOCATOR_NAME, path, c->n, c->distinct, (double)c->chars / c->distinct);
    in_child(run_atomtab, c);
    printf(",\n");
    in_child(run_glib, c);
    printf(",\n");
    in_child(run_libxml2, c);
    printf("]");
#ifndef MEMBYTES_LIBC
    size_classes(c);
#endif
    printf("}\n");
    return 0;
}

int main(int argc, char **argv)
{
    corpus c;
    json = argc == 3 && strcmp(argv[1], "--json") == 0;
    if (argc != 2 + json) {
        fprintf(stderr, "usage: membytes [--json] FILE\n");
        return 2;
    }
    const char *path = argv[1 + json];
    table_share = mmap(NULL, sizeof *table_share, PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (table_share == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    load(path, &c);
    if (json)
        return print_json(&c, path);
    printf("%s: %zu tokens, %zu distinct, %.2f chars+NUL per distinct token\n",
           path, c.n, c.distinct, (double)c.chars / c.distinct);
#ifdef MEMBYTES_LIBC
    printf("method: glibc mallinfo2 uordblks + hblkhd delta (chunk sizes) around interning\n"
           "the whole stream in a thread of its own (its exit empties glibc's per-thread\n"
           "cache of freed blocks), each interner in a fresh process; per distinct atom.\n\n");
#else
    printf("method: jemalloc stats.allocated delta (usable sizes) around interning the\n"
           "whole stream, each interner in a fresh process; per distinct atom.\n\n");
#endif
    printf("%-22s %10s %10s %10s %10s\n", "interner", "bytes", "B/atom",
           "chars+NUL", "overhead");
    in_child(run_atomtab, &c);
    in_child(run_glib, &c);
    in_child(run_libxml2, &c);
#ifndef MEMBYTES_LIBC
    size_classes(&c);
#endif
    return 0;
}
