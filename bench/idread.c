/* SPDX-License-Identifier: MIT */
/*
** idread.c - the id-read microbenchmark: what reading `el.id` costs a host
** runtime whose strings are copies of the atom, external strings pointing
** at the atom, or external strings made once per atom (the host cache).
**
** The model host has the string kinds a JS engine has: inline (<= 15 bytes
** of chars inside the string object), heap copy (object + separate chars)
** and external (object pointing at atab_chars, holding a handle). Strings
** are refcounted; a read returns a reference that the caller drops, as a
** GC would collect a temporary. Host objects come from malloc.
**
** Modes: copy (a new inline or heap string per read), external (a new
** external string per read: a handle, no copy), external+cache (the cached
** external string: atab_host_cache_get), handle-alloc (as external,
** plus a 16-byte handle object per string: what a handle that is its own
** allocation would cost; atomtab's handles are zero-byte).
**
** Usage: idread [--json] [--iters N] [--repeats N] [--length L]
** --length runs one length only (for callgrind: tools/idread-callgrind.sh
** counts instructions per read, which the shared machines' noise does not
** touch).
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "atomtab.h"

enum { K_INLINE, K_HEAP, K_EXTERNAL };

typedef struct mstr {
    unsigned rc, kind;
    size_t len;
    const char *chars;
    atab_table *t;          /* external: the handle */
    const atab_atom *a;
    void *handle;           /* handle-alloc mode: a separate handle object */
    char inl[16];
} mstr;

typedef struct element {
    atab_table *t;
    atab_host_cache *cache;
    const atab_atom *id;
} element;

typedef struct handle_obj {
    atab_table *t;
    const atab_atom *a;
} handle_obj;

static void mstr_unref(mstr *s)
{
    if (--s->rc)
        return;
    if (s->kind == K_HEAP)
        free((void *)s->chars);
    if (s->kind == K_EXTERNAL) {
        if (s->handle) {
            handle_obj *h = s->handle;
            atab_external_release(h->t, h->a);
            free(h);
        } else {
            atab_external_release(s->t, s->a);
        }
    }
    free(s);
}

static mstr *new_copy(const atab_atom *a)
{
    size_t len = atab_len(a);
    mstr *s = malloc(sizeof *s);
    s->rc = 1;
    s->len = len;
    s->handle = NULL;
    if (len < sizeof s->inl) {
        s->kind = K_INLINE;
        memcpy(s->inl, atab_chars(a), len + 1);
        s->chars = s->inl;
    } else {
        char *c = malloc(len + 1);
        memcpy(c, atab_chars(a), len + 1);
        s->kind = K_HEAP;
        s->chars = c;
    }
    return s;
}

static mstr *new_external(atab_table *t, const atab_atom *a, int handle_alloc)
{
    mstr *s = malloc(sizeof *s);
    s->rc = 1;
    s->kind = K_EXTERNAL;
    s->len = atab_len(a);
    s->chars = atab_chars(a);
    s->t = t;
    s->a = atab_external_acquire(t, a);
    s->handle = NULL;
    if (handle_alloc) {
        handle_obj *h = malloc(sizeof *h);
        h->t = t;
        h->a = a;
        s->handle = h;
    }
    return s;
}

/* The host cache's callbacks. */
static void *c_create(void *ud, atab_table *t, const atab_atom *a, unsigned *refs)
{
    (void)ud;
    *refs = 1;
    return new_external(t, a, 0);
}

static void *c_hold(void *ud, void *s)
{
    (void)ud;
    ((mstr *)s)->rc++;
    return s;
}

static void c_drop(void *ud, void *s)
{
    (void)ud;
    mstr_unref(s);
}

enum { M_COPY, M_EXTERNAL, M_CACHE, M_HANDLE_ALLOC, N_MODES };
static const char *const mode_names[N_MODES] = {"copy", "external", "external+cache",
                                                "handle-alloc"};

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static volatile size_t sink;

/* One loop per mode, `for (i < iters) n += el.id.length`, each read's
** string dropped at once; separate functions so callgrind can count each
** (callgrind_annotate --inclusive=yes: loop_<mode> / iters). */
#define READ_LOOP(name, expr)                                           \
    static __attribute__((noinline)) size_t name(const element *el, long iters) \
    {                                                                   \
        size_t n = 0;                                                   \
        for (long i = 0; i < iters; i++) {                              \
            mstr *s = (expr);                                           \
            n += s->len;                                                \
            mstr_unref(s);                                              \
        }                                                               \
        return n;                                                       \
    }
READ_LOOP(loop_copy, new_copy(el->id))
READ_LOOP(loop_external, new_external(el->t, el->id, 0))
READ_LOOP(loop_cache, (mstr *)atab_host_cache_get(el->cache, el->id))
READ_LOOP(loop_handle_alloc, new_external(el->t, el->id, 1))

static size_t (*const loops[N_MODES])(const element *, long) = {
    loop_copy, loop_external, loop_cache, loop_handle_alloc};

/* ns per read. */
static double run(const element *el, int mode, long iters)
{
    double t0 = now_ns();
    sink = loops[mode](el, iters);
    return (now_ns() - t0) / (double)iters;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static const size_t lengths[] = {3, 14, 15, 16, 63, 64, 100, 101};
#define N_LENGTHS (sizeof lengths / sizeof lengths[0])

/* "foo", "This is a test", then one letter repeated. */
static void make_id(char *buf, size_t len)
{
    if (len == 3)
        memcpy(buf, "foo", 4);
    else if (len == 14)
        memcpy(buf, "This is a test", 15);
    else
        memset(buf, 'x', len), buf[len] = 0;
}

/* A whole decimal number in [lo, hi], or -1. */
static long arg_number(const char *s, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    return end == s || *end || errno || v < lo || v > hi ? -1 : v;
}

/* Is len one of the lengths measured? */
static int measured(long len)
{
    for (size_t l = 0; l < N_LENGTHS; l++)
        if ((long)lengths[l] == len)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    int json = 0;
    long iters = 1000000, repeats = 5, only = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = arg_number(argv[++i], 1, 1000000000000L);
        else if (!strcmp(argv[i], "--repeats") && i + 1 < argc)
            repeats = arg_number(argv[++i], 1, 99);
        else if (!strcmp(argv[i], "--length") && i + 1 < argc) {
            if (!measured(only = arg_number(argv[++i], 0, 1000)))
                return fprintf(stderr, "idread: --length: one of 3, 14, 15, 16, 63, 64, 100, 101\n"), 2;
        } else
            return fprintf(stderr, "usage: idread [--json] [--iters N] [--repeats N (1-99)] "
                                   "[--length 3|14|15|16|63|64|100|101]\n"), 2;
    }
    if (iters < 1 || repeats < 1)
        return fprintf(stderr, "idread: --iters takes 1 to 10^12, --repeats 1 to 99\n"), 2;
    atab_table *t = atab_table_new(NULL);
    atab_host_ops ops = {c_create, c_hold, c_drop, NULL};
    atab_host_cache *cache = t ? atab_host_cache_new(t, &ops) : NULL;
    if (!cache)
        return fprintf(stderr, "idread: %s\n", atab_strerror(atab_last_error())), 1;
    /* Repeats are interleaved (every mode and length once per round), so
    ** a noisy neighbour slows all cells alike and the ratios hold. */
    static double v[N_MODES][N_LENGTHS][99];
    double res[N_MODES][N_LENGTHS];
    element els[N_LENGTHS];
    for (size_t l = 0; l < N_LENGTHS; l++) {
        char buf[128];
        make_id(buf, lengths[l]);
        els[l] = (element){t, cache, atab_intern_cstr(t, buf)};
        for (int m = 0; m < N_MODES && (only < 0 || (size_t)only == lengths[l]); m++)
            run(&els[l], m, iters / 10 + 1);   /* warm up */
    }
    for (long r = 0; r < repeats; r++)
        for (size_t l = 0; l < N_LENGTHS; l++)
            for (int m = 0; m < N_MODES; m++)
                v[m][l][r] = only < 0 || (size_t)only == lengths[l] ? run(&els[l], m, iters) : 0;
    for (size_t l = 0; l < N_LENGTHS; l++) {
        for (int m = 0; m < N_MODES; m++) {
            qsort(v[m][l], (size_t)repeats, sizeof(double), cmp_double);
            res[m][l] = v[m][l][repeats / 2];
        }
        atab_release(t, els[l].id);
    }
    if (json) {
        const char *sep = "";
        printf("[");
        for (int m = 0; m < N_MODES; m++)
            for (size_t l = 0; l < N_LENGTHS; l++)
                if (only < 0 || (size_t)only == lengths[l]) {   /* the lengths run */
                    printf("%s{\"mode\":\"%s\",\"length\":%zu,\"ns_per_read\":%.2f}",
                           sep, mode_names[m], lengths[l], res[m][l]);
                    sep = ",\n ";
                }
        printf("]\n");
    } else {
        printf("ns per read (median of %ld runs of %ld reads)\n", repeats, iters);
        printf("%6s", "length");
        for (int m = 0; m < N_MODES; m++)
            printf(" %15s", mode_names[m]);
        printf("\n");
        double lo = 1e300, hi = 0;
        for (size_t l = 0; l < N_LENGTHS; l++) {
            if (only >= 0 && (size_t)only != lengths[l])
                continue;   /* not run */
            printf("%6zu", lengths[l]);
            for (int m = 0; m < N_MODES; m++)
                printf(" %15.2f", res[m][l]);
            printf("\n");
            lo = res[M_CACHE][l] < lo ? res[M_CACHE][l] : lo;
            hi = res[M_CACHE][l] > hi ? res[M_CACHE][l] : hi;
        }
        if (only < 0)
            printf("external+cache max/min over lengths: %.2f (goal <= 1.2)\n", hi / lo);
        if (only < 0 || only == 101) {
            printf("copy / external+cache at 101: %.1fx (goal >= 5)\n",
                   res[M_COPY][N_LENGTHS - 1] / res[M_CACHE][N_LENGTHS - 1]);
            printf("handle-alloc / external at 101: %.2fx (a handle object per string)\n",
                   res[M_HANDLE_ALLOC][N_LENGTHS - 1] / res[M_EXTERNAL][N_LENGTHS - 1]);
        }
    }
    atab_host_cache_free(cache);
    atab_table_free(t);
    return 0;
}
