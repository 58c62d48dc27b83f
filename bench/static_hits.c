/* SPDX-License-Identifier: MIT */
/*
** static_hits.c - static atoms on a token stream (the bundled corpus):
** how many ops return a static atom of the default set, and what a static
** hit costs against a dynamic hit on the same strings.
**
** usage: static_hits FILE [PHASE]   (one token per line)
**   without PHASE: the share of static hits, then ns per op of static and
**     dynamic hits, alternated in the same run, and their ratio
**   PHASE (for callgrind, with --collect-atstart=no; prints the ops counted):
**     static   intern+release of every static-hit op of the stream, on a
**              table with the default set, every string already cached
**     dynamic  the same ops on a table without the default set, every
**              string already interned (dynamic hits)
**     first    the first lookup of each distinct static string on a fresh
**              table: the locked miss path, the static index, the caching
**     dynmiss  the first intern of each of those strings on a fresh table
**              without the default set: creates the dynamic atoms
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <valgrind/callgrind.h>

#include "atomtab.h"

typedef struct ops {
    const char **s;
    size_t *len;
    size_t n;
} ops;

static void push(ops *o, const char *s, size_t len)
{
    o->s = realloc(o->s, (o->n + 1) * sizeof *o->s);
    o->len = realloc(o->len, (o->n + 1) * sizeof *o->len);
    if (!o->s || !o->len)
        exit(1);
    o->s[o->n] = s;
    o->len[o->n++] = len;
}

/* Reads FILE into tokens (the buffer is kept for the run). */
static ops read_ops(const char *path)
{
    ops o = {NULL, NULL, 0};
    FILE *f = fopen(path, "rb");
    if (!f)
        perror(path), exit(1);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
        exit(1);
    buf[n] = '\0';
    fclose(f);
    for (char *p = buf, *e; *p; p = e + 1) {
        e = strchr(p, '\n');
        if (!e)
            e = p + strlen(p);
        if (e > p)
            push(&o, p, (size_t)(e - p));
        if (!*e)
            break;
        *e = '\0';
    }
    return o;
}

static atab_table *new_table(int with_default)
{
    atab_options o;
    memset(&o, 0, sizeof o);
    o.flags = ATAB_FIXED_SEED | (with_default ? 0 : ATAB_NO_DEFAULT_STATICS);
    o.seed = 42;
    atab_table *t = atab_table_new(&o);
    if (!t)
        exit(1);
    return t;
}

/* Splits the stream: the static-hit ops, and the distinct static strings
** (in first-seen order, told by a second, plain table used as a set). */
static void classify(const ops *all, ops *st, ops *distinct)
{
    atab_table *t = new_table(1), *seen = new_table(0);
    for (size_t i = 0; i < all->n; i++) {
        const atab_atom *a = atab_lookup(t, all->s[i], all->len[i]);
        if (!a || !atab_is_static(a))
            continue;
        push(st, all->s[i], all->len[i]);
        if (!atab_lookup(seen, all->s[i], all->len[i])) {
            push(distinct, all->s[i], all->len[i]);
            atab_intern(seen, all->s[i], all->len[i]);
        }
    }
    atab_table_free(t);
    atab_table_free(seen);
}

static void run(atab_table *t, const ops *o)
{
    for (size_t i = 0; i < o->n; i++)
        atab_release(t, atab_intern(t, o->s[i], o->len[i]));
}

static void warm(atab_table *t, const ops *o)
{
    for (size_t i = 0; i < o->n; i++)
        atab_intern(t, o->s[i], o->len[i]);   /* dynamic ones: kept alive */
}

static double ns_per_op(atab_table *t, const ops *o)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    run(t, o);
    clock_gettime(CLOCK_MONOTONIC, &b);
    return ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)o->n;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* One phase under callgrind: only the measured loop is collected. */
static int phase(const char *name, const ops *st, const ops *distinct)
{
    int with_default = !strcmp(name, "static") || !strcmp(name, "first");
    const ops *o = !strcmp(name, "static") || !strcmp(name, "dynamic") ? st : distinct;
    atab_table *t = new_table(with_default);
    if (o == st)
        warm(t, o);
    else   /* this thread's record on t, made outside the measurement */
        atab_release(t, atab_intern_cstr(t, "static-hits: not a static string"));
    CALLGRIND_TOGGLE_COLLECT;
    if (o == st)
        run(t, o);
    else
        warm(t, o);   /* first lookups (interns) of each string */
    CALLGRIND_TOGGLE_COLLECT;
    printf("%zu\n", o->n);
    atab_table_free(t);
    return 0;
}

int main(int argc, char **argv)
{
    ops all, st = {NULL, NULL, 0}, distinct = {NULL, NULL, 0};
    if (argc < 2)
        return fprintf(stderr, "usage: static_hits FILE [static|dynamic|first|dynmiss]\n"), 2;
    all = read_ops(argv[1]);
    classify(&all, &st, &distinct);
    if (argc > 2)
        return phase(argv[2], &st, &distinct);
    printf("ops: %zu; static hits (default set): %zu (%.1f%%); distinct static strings: %zu\n",
           all.n, st.n, 100.0 * (double)st.n / (double)all.n, distinct.n);
    atab_table *ts = new_table(1), *td = new_table(0);
    warm(ts, &st);
    warm(td, &st);
    double s[7], d[7], r[7];
    for (int k = 0; k < 7; k++) {   /* alternated, same run */
        s[k] = ns_per_op(ts, &st);
        d[k] = ns_per_op(td, &st);
        r[k] = s[k] / d[k];
    }
    qsort(s, 7, sizeof *s, cmp_double);
    qsort(d, 7, sizeof *d, cmp_double);
    qsort(r, 7, sizeof *r, cmp_double);
    printf("intern+release over the %zu static-hit ops, median of 7 alternated runs:\n"
           "  static hit %.1f ns/op, dynamic hit %.1f ns/op, static/dynamic %.2f\n",
           st.n, s[3], d[3], r[3]);
    return 0;
}
