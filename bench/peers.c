/* SPDX-License-Identifier: MIT */
/*
** peers.c - atompeers: atomtab beside its peers on one thread, in the
** same run, on the C library's malloc, with the versions and the machine
** printed beside the figures.
**
** Peers: string_cache, ustr and lasso (Rust; bench/sc, run as
** `atomtab-sc-bench --peer NAME`, bench/sc/src/peers.rs), GLib's
** g_intern_string, libxml2's xmlDictLookup and "naive" (bench/naive.h).
** atomtab is the default build: atab_intern / atab_release, default
** options, the C library's malloc (this program does not link jemalloc).
** Every backend is called directly, as its host would call it.
**
** Workloads (ns per op), in this order, in one fresh process per backend:
**   stream  a fresh table; every token of the file in file order
**   bytes   overhead per distinct token: the heap's growth over the
**           stream (glibc's mallinfo2() uordblks + hblkhd: chunk sizes,
**           headers included) less chars+NUL of the distinct tokens,
**           over the distinct tokens; the same measure in every backend
**   hit     the stream's ops again on the warm table; no release
**           (atomtab keeps each reference, string_cache forgets its atom)
**   hitrel  each op an intern and its release (atomtab: atab_release;
**           string_cache: the drop). Peers without a release (ustr,
**           lasso, GLib, libxml2, naive): the intern alone
**   mix     as hitrel, but op j % 8 == 7 interns a new string ("mix-0-N",
**           by snprintf) instead of the next token: bench/threads.c's mix
**           on one thread
**   mixpre  mix with its new strings ("mix-1-N") made before the clock, as
**           the tokens are: the table's work without snprintf's (about
**           1,200 instructions a string, nearly as many as atomtab's 8
**           ops of a group together)
** The driver runs each backend's child once per repeat, backends
** interleaved and their order rotated each repeat; a figure is the median
** (and min) of the repeats. Per row it prints atomtab / the fastest peer
** and atomtab / string_cache (time ratios: below 1, atomtab is faster),
** then the goals as those ratios, each with the same ratio taken within
** each repeat (its two runs seconds apart) and the median and range of
** those, which the machine's drift from repeat to repeat does not move.
**
** usage: atompeers [--reps 5] [--quick] [--json] [--sc PATH] [--limit N]
**                  [--backends a,b,..] FILE...
**        atompeers --child BACKEND FILE [--limit N]
**   --sc     the bench/sc binary (no --sc: the Rust peers are skipped)
**   --limit  the first N tokens of each file only
**   --quick  a smoke run: --reps 1 --limit 50000
** ATAB_PMU=1: each C backend's child prints its hardware event counts per
** op for each workload on stderr, where the machine has counters (pmu.h).
*/
#include <gnu/libc-version.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>
#include <libxml/xmlversion.h>
#include <libxml/xmlstring.h>
#include <libxml/dict.h>

#include <atomtab.h>

#include "naive.h"
#include "pmu.h"
#include "stats.h"
#include "tokens.h"

/* ---- the C backends: create, intern, release (or none), destroy ---- */

static void *at_create(void) { return atab_table_new(NULL); }
static inline const void *at_intern(void *t, const char *s, size_t len)
{
    return atab_intern(t, s, len);
}
static inline void at_release(void *t, const void *a) { atab_release(t, a); }
static void at_destroy(void *t) { atab_table_free(t); }

static void *gl_create(void) { return (void *)1; }   /* one global table */
static inline const void *gl_intern(void *t, const char *s, size_t len)
{
    (void)t, (void)len;
    return g_intern_string(s);   /* s[len] == 0 */
}
static void gl_destroy(void *t) { (void)t; }

static void *xd_create(void) { return xmlDictCreate(); }
static inline const void *xd_intern(void *t, const char *s, size_t len)
{
    return xmlDictLookup(t, (const xmlChar *)s, (int)len);
}
static void xd_destroy(void *t) { xmlDictFree(t); }

static inline void no_release(void *t, const void *a) { (void)t, (void)a; }

/* ---- the workloads, one set per backend, each call direct ---- */

typedef struct figures {
    double stream, hit, hitrel, mix, mixpre;
    size_t bytes;
} figures;

static volatile uintptr_t sink;

/* Live heap bytes by glibc's count: in-use arena chunks plus mmapped
** blocks. */
static size_t heap_bytes(void)
{
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
}

/* "mix-0-N" in buf; returns its length. */
static inline size_t mix_name(char *buf, size_t size, size_t n)
{
    return (size_t)snprintf(buf, size, "mix-0-%zu", n);
}

/* mixpre's new strings, "mix-1-N" for N < count(k), as tokens: made
** before its clock. */
static tokens mix_names(const tokens *k)
{
    tokens m;
    m.n = k->n / 8 + 1;
    m.text = malloc(m.n * 32);
    m.s = malloc(m.n * sizeof *m.s);
    m.len = malloc(m.n * sizeof *m.len);
    if (!m.text || !m.s || !m.len) {
        fprintf(stderr, "atompeers: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < m.n; i++) {
        char *p = m.text + 32 * i;
        m.len[i] = (size_t)snprintf(p, 32, "mix-1-%zu", i);
        m.s[i] = p;
    }
    return m;
}

static void mix_names_free(tokens *m)
{
    free(m->text);
    free(m->s);
    free(m->len);
}

/* PREFIX_measure(k, f): the workloads in order on one fresh table. */
#define BACKEND_WORKLOADS(P, CREATE, INTERN, RELEASE, DESTROY)                      \
    __attribute__((noinline)) static double P##_keep(void *t, const tokens *k)      \
    {                                                                               \
        uintptr_t x = 0;                                                            \
        double t0 = now_ns();                                                       \
        for (size_t i = 0; i < k->n; i++)                                           \
            x ^= (uintptr_t)INTERN(t, k->s[i], k->len[i]);                          \
        sink = x;                                                                   \
        return (now_ns() - t0) / (double)k->n;                                      \
    }                                                                               \
    __attribute__((noinline)) static double P##_hitrel(void *t, const tokens *k)    \
    {                                                                               \
        double t0 = now_ns();                                                       \
        for (size_t i = 0; i < k->n; i++)                                           \
            RELEASE(t, INTERN(t, k->s[i], k->len[i]));                              \
        return (now_ns() - t0) / (double)k->n;                                      \
    }                                                                               \
    /* m: mixpre's strings, made before the clock; NULL: mix's, by snprintf */  \
    __attribute__((noinline)) static double P##_mix(void *t, const tokens *k,       \
                                                    const tokens *m)                \
    {                                                                               \
        char buf[64];                                                               \
        size_t i = 0, fresh = 0;                                                    \
        double t0 = now_ns();                                                       \
        for (size_t j = 0; j < k->n; j++) {                                         \
            if ((j & 7) == 7) {                                                     \
                const char *s = m ? m->s[fresh] : buf;                              \
                size_t len = m ? m->len[fresh] : mix_name(buf, sizeof buf, fresh);  \
                fresh++;                                                            \
                RELEASE(t, INTERN(t, s, len));                                      \
            } else {                                                                \
                RELEASE(t, INTERN(t, k->s[i], k->len[i]));                          \
                i++;                                                                \
            }                                                                       \
        }                                                                           \
        return (now_ns() - t0) / (double)k->n;                                      \
    }                                                                               \
    static void P##_measure(const tokens *k, figures *f)                            \
    {                                                                               \
        pmu p = pmu_open();                                                         \
        size_t before = heap_bytes();                                               \
        void *t = CREATE();                                                         \
        pmu_begin(&p);                                                              \
        f->stream = P##_keep(t, k);                                                 \
        pmu_end(&p, "stream", k->n);                                                \
        f->bytes = heap_bytes() - before;                                           \
        pmu_begin(&p);                                                              \
        f->hit = P##_keep(t, k);                                                    \
        pmu_end(&p, "hit", k->n);                                                   \
        pmu_begin(&p);                                                              \
        f->hitrel = P##_hitrel(t, k);                                               \
        pmu_end(&p, "hitrel", k->n);                                                \
        pmu_begin(&p);                                                              \
        f->mix = P##_mix(t, k, NULL);                                               \
        pmu_end(&p, "mix", k->n);                                                   \
        tokens m = mix_names(k);                                                    \
        pmu_begin(&p);                                                              \
        f->mixpre = P##_mix(t, k, &m);                                              \
        pmu_end(&p, "mixpre", k->n);                                                \
        mix_names_free(&m);                                                         \
        DESTROY(t);                                                                 \
    }

BACKEND_WORKLOADS(at, at_create, at_intern, at_release, at_destroy)
BACKEND_WORKLOADS(gl, gl_create, gl_intern, no_release, gl_destroy)
BACKEND_WORKLOADS(xd, xd_create, xd_intern, no_release, xd_destroy)
BACKEND_WORKLOADS(nv, nv_create, nv_intern, no_release, nv_destroy)

typedef struct backend {
    const char *name;
    void (*measure)(const tokens *k, figures *f);   /* NULL: a bench/sc peer */
    int release;                                    /* has a release */
} backend;

static const backend backends[] = {
    {"atomtab", at_measure, 1},  {"string_cache", NULL, 1}, {"ustr", NULL, 0},
    {"lasso", NULL, 0},          {"lasso-ahash", NULL, 0},  {"glib", gl_measure, 0},
    {"libxml2", xd_measure, 0},  {"naive", nv_measure, 0},
};
#define NBACKENDS (sizeof backends / sizeof backends[0])
enum { AT = 0, SC = 1 };

/* Results, in print order; "bytes" is overhead per distinct token. */
static const char *const wl_name[] = {"hit", "stream", "hitrel", "mix", "mixpre", "bytes"};
#define NWL 6
enum { W_HIT, W_STREAM, W_HITREL, W_MIX, W_MIXPRE, W_BYTES };

static const backend *find_backend(const char *name)
{
    for (size_t i = 0; i < NBACKENDS; i++)
        if (strcmp(backends[i].name, name) == 0)
            return &backends[i];
    return NULL;
}

/* The child: one C backend on the first `limit` tokens of one file. */
static int child(const char *bname, const char *path, size_t limit)
{
    const backend *b = find_backend(bname);
    tokens k;
    figures f;
    if (!b || !b->measure) {
        fprintf(stderr, "atompeers: no C backend '%s'\n", bname);
        return 2;
    }
    tokens_load(path, &k, "atompeers");
    if (k.n > limit)
        k.n = limit;
    /* bytes is glibc's count: refuse a process whose malloc, or whose
    ** atomtab, allocates where mallinfo2 does not see (ALLOCATOR=jemalloc,
    ** a preloaded malloc) */
    size_t h0 = heap_bytes();
    void *volatile probe = malloc(4096);   /* volatile: GCC drops an unused malloc/free pair */
    size_t h1 = heap_bytes();
    atab_table *pt = atab_table_new(NULL);
    size_t h2 = heap_bytes();
    atab_stats st = {0};
    int seen = probe && pt && atab_get_stats(pt, &st) == ATAB_OK &&
               h1 - h0 >= 4096 + sizeof(void *) && h2 - h1 >= st.bytes && st.bytes > 0;
    atab_table_free(pt);
    free(probe);
    if (!seen) {
        fprintf(stderr, "atompeers: the heap is not glibc malloc's as mallinfo2 counts it "
                        "(ALLOCATOR=jemalloc or a preloaded malloc?): B/atom would be wrong\n");
        return 1;
    }
    b->measure(&k, &f);
    printf("stream=%.3f bytes=%zu hit=%.3f hitrel=%.3f mix=%.3f mixpre=%.3f ops=%zu\n",
           f.stream, f.bytes, f.hit, f.hitrel, f.mix, f.mixpre, k.n);
    return 0;
}

/* ---- the driver ---- */

/* Runs argv with its stdout into line[size]; 0 when it exited 0. */
static int run_line(char *const argv[], char *line, size_t size)
{
    int fd[2], st;
    fflush(stdout);
    if (pipe(fd) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        execv(argv[0], argv);
        _exit(127);
    }
    close(fd[1]);
    FILE *f = fdopen(fd[0], "r");
    line[0] = ' ';   /* so every key is found as " key=" */
    if (!f || !fgets(line + 1, (int)size - 1, f))
        line[1] = '\0';
    if (f)
        fclose(f);
    return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0
               ? 0 : -1;
}

/* One child of backend b; adds its figures to row[]. */
static void run_child(const char *sc, const backend *b, const char *path, size_t limit,
                      size_t distinct, size_t chars, cell *row)
{
    char lim[32], line[1024];
    snprintf(lim, sizeof lim, "%zu", limit);
    char *cargv[] = {"/proc/self/exe", "--child", (char *)b->name, (char *)path, "--limit", lim,
                     NULL};
    char *rargv[] = {(char *)sc, "--peer", (char *)b->name, "--limit", lim, (char *)path, NULL};
    if (run_line(b->measure ? cargv : rargv, line, sizeof line) != 0) {
        fprintf(stderr, "atompeers: backend %s failed on %s\n", b->name, path);
        exit(1);
    }
    for (size_t w = 0; w < NWL; w++) {
        char key[40];
        snprintf(key, sizeof key, " %s=", wl_name[w]);
        char *p = strstr(line, key);
        if (!p) {
            fprintf(stderr, "atompeers: %s gave no %s: %s", b->name, wl_name[w], line + 1);
            exit(1);
        }
        double v = strtod(p + strlen(key), NULL);
        if (w == W_BYTES)   /* overhead per distinct token */
            v = (v - (double)chars) / (double)distinct;
        row[w].v[row[w].n++] = v;
    }
}

typedef struct env {
    char cpu[256], kernel[128], sc_versions[256];
    char sc_ver[32], ustr_ver[32], lasso_ver[32], rustc[96], glib[32];
    long ncpu;
} env;

/* The value of " NAME=" in line into out ("-" when absent); '_' -> ' '. */
static void kv(const char *line, const char *name, char *out, size_t size)
{
    char key[40];
    snprintf(key, sizeof key, "%s=", name);
    const char *p = strstr(line, key);
    snprintf(out, size, "%.*s", p ? (int)strcspn(p + strlen(key), " \n") : 1,
             p ? p + strlen(key) : "-");
    for (char *c = out; *c; c++)
        if (*c == '_')
            *c = ' ';
}

static void get_env(env *e, const char *sc)
{
    struct utsname u;
    cpu_model(e->cpu, sizeof e->cpu);
    e->ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (uname(&u) == 0)
        snprintf(e->kernel, sizeof e->kernel, "%.20s %.64s %.20s", u.sysname, u.release, u.machine);
    else
        snprintf(e->kernel, sizeof e->kernel, "unknown");
    snprintf(e->glib, sizeof e->glib, "%u.%u.%u", glib_major_version, glib_minor_version,
             glib_micro_version);
    e->sc_versions[0] = ' ';
    e->sc_versions[1] = '\0';
    char *argv[] = {(char *)sc, "--versions", NULL};
    if (sc && run_line(argv, e->sc_versions, sizeof e->sc_versions) != 0)
        e->sc_versions[1] = '\0';
    kv(e->sc_versions, "string_cache", e->sc_ver, sizeof e->sc_ver);
    kv(e->sc_versions, "ustr", e->ustr_ver, sizeof e->ustr_ver);
    kv(e->sc_versions, "lasso", e->lasso_ver, sizeof e->lasso_ver);
    kv(e->sc_versions, "rustc", e->rustc, sizeof e->rustc);
}

static void print_env(const env *e)
{
    printf("machine: %s, %ld CPUs, %s, glibc %s; C: gcc %s -O2; Rust: %s, opt-level 3\n",
           e->cpu, e->ncpu, e->kernel, gnu_get_libc_version(), __VERSION__, e->rustc);
    printf("versions: atomtab %s (default build, glibc malloc), string_cache %s "
           "(DefaultAtom), ustr %s, lasso %s (Rodeo, default features), GLib %s, "
           "libxml2 %s, naive (bench/naive.h)\n",
           atab_version(), e->sc_ver, e->ustr_ver, e->lasso_ver, e->glib,
           LIBXML_DOTTED_VERSION);
}

static void json_env(const env *e)
{
    printf("{\"bench\": \"atompeers\", \"machine\": {\"cpu\": \"%s\", \"nproc\": %ld, "
           "\"kernel\": \"%s\", \"glibc\": \"%s\", \"cc\": \"gcc %s\", \"rustc\": \"%s\"},\n"
           " \"versions\": {\"atomtab\": \"%s\", \"string_cache\": \"%s\", \"ustr\": \"%s\", "
           "\"lasso\": \"%s\", \"glib\": \"%s\", \"libxml2\": \"%s\"},\n"
           " \"allocator\": \"glibc malloc\", \"unit\": \"ns/op; bytes: B per distinct token\", ",
           e->cpu, e->ncpu, e->kernel, gnu_get_libc_version(), __VERSION__, e->rustc,
           atab_version(), e->sc_ver, e->ustr_ver, e->lasso_ver, e->glib,
           LIBXML_DOTTED_VERSION);
}

typedef struct result {
    double med[NBACKENDS][NWL], min[NBACKENDS][NWL];
    /* Each goal's ratio taken within each repeat (the two backends' runs of
    ** one repeat, seconds apart), then the median and range of those: the
    ** machine's drift between repeats cancels. n 0: not taken. */
    struct { double med, lo, hi; size_t n; } pair[NWL];
} result;

/* Row w's ratio num / den within each of the n repeats: median and range. */
static void pair_ratio(result *r, size_t w, const double *num, const double *den, size_t n)
{
    double v[100];
    cell c = {v, 0};
    for (size_t i = 0; i < n && i < 100; i++)
        if (den[i] > 0)
            v[c.n++] = num[i] / den[i];
    r->pair[w].n = c.n;
    r->pair[w].med = median(&c);   /* sorts v */
    r->pair[w].lo = c.n ? v[0] : 0;
    r->pair[w].hi = c.n ? v[c.n - 1] : 0;
}

/* The fastest (lowest) peer of row w, or -1. */
static int fastest_peer(const result *r, const int *use, size_t w)
{
    int best = -1;
    for (size_t b = 1; b < NBACKENDS; b++)
        if (use[b] && (best < 0 || r->med[b][w] < r->med[best][w]))
            best = (int)b;
    return best;
}

/* How many of k's first n tokens atomtab's default static set holds: ops
** that atomtab serves from read-only data, which no peer but string_cache
** (its atoms of up to 7 bytes, packed into the word) has a path like. */
static size_t static_ops(const tokens *k, size_t n)
{
    atab_table *t = atab_table_new(NULL);
    size_t hits = 0;
    for (size_t i = 0; t && i < n; i++) {
        const atab_atom *a = atab_lookup(t, k->s[i], k->len[i]);
        hits += a && atab_is_static(a);
        if (a)
            atab_release(t, a);   /* static: nothing to drop */
    }
    atab_table_free(t);
    return hits;
}

static void print_table(const env *e, const char *path, size_t ntok, size_t distinct,
                        size_t statics, const int *use, const result *r, int reps)
{
    printf("\n%s: %zu tokens, %zu distinct; median of %d repeats, ns/op "
           "(B/atom: heap growth less chars+NUL, per distinct token)\n",
           path, ntok, distinct, reps);
    printf("  atomtab's default static set serves %.1f%% of these ops from read-only data "
           "(string_cache runs here with no static set of its own, which its codegen crate could make;\n"
           "  it packs atoms of up to 7 bytes into the word)\n",
           ntok ? 100.0 * (double)statics / (double)ntok : 0.0);
    printf("  [%s, %ld CPUs, %s; atomtab %s, string_cache %s, ustr %s, lasso %s, GLib %s, "
           "libxml2 %s]\n", e->cpu, e->ncpu, e->kernel, atab_version(), e->sc_ver,
           e->ustr_ver, e->lasso_ver, e->glib, LIBXML_DOTTED_VERSION);
    printf("%-8s", "");
    for (size_t b = 0; b < NBACKENDS; b++)
        if (use[b])
            printf(" %12s", backends[b].name);
    printf("  %-24s %s\n", "atomtab/fastest peer", "atomtab/string_cache");
    for (size_t w = 0; w < NWL; w++) {
        printf("%-8s", w == W_BYTES ? "B/atom" : wl_name[w]);
        for (size_t b = 0; b < NBACKENDS; b++) {
            if (!use[b])
                continue;
            int star = (w == W_HITREL || w == W_MIX || w == W_MIXPRE) && !backends[b].release;
            printf(" %11.2f%s", r->med[b][w], star ? "*" : " ");
        }
        int f = fastest_peer(r, use, w);
        char c[48] = "-";
        if (use[AT] && f >= 0 && r->med[f][w] > 0)
            snprintf(c, sizeof c, "%.2f (%s)", r->med[AT][w] / r->med[f][w], backends[f].name);
        printf("  %-24s", c);
        if (use[AT] && use[SC] && r->med[SC][w] > 0)
            printf(" %.2f", r->med[AT][w] / r->med[SC][w]);
        printf("\n");
    }
    printf("  * no release: the intern alone (what that peer's host does)\n");
}

/* A goal's ratio within each repeat (result.pair), under its goal line. */
static void print_pair(const result *r, size_t w)
{
    if (r->pair[w].n > 1)
        printf("       within each repeat: median %.2f, range %.2f-%.2f (%zu repeats)\n",
               r->pair[w].med, r->pair[w].lo, r->pair[w].hi, r->pair[w].n);
}

/* Issue goals as same-run ratios of this file's medians, each with the
** same ratio taken within each repeat. */
static void print_goals(const result *r, const int *use)
{
    if (!use[AT])
        return;
    static const struct { size_t w; double lim; const char *what; } fg[] = {
        {W_HIT, 0.67, "hit: atomtab / fastest peer"},
        {W_STREAM, 0.8, "stream: atomtab / fastest peer"},
    };
    for (size_t i = 0; i < 2; i++) {
        int f = fastest_peer(r, use, fg[i].w);
        if (f < 0)
            continue;
        double v = r->med[AT][fg[i].w] / r->med[f][fg[i].w];
        printf("goal %-38s %5.2f (%s)   <= %.2f  %s\n", fg[i].what, v, backends[f].name,
               fg[i].lim, v <= fg[i].lim ? "met" : "NOT met");
        print_pair(r, fg[i].w);
    }
    if (use[SC]) {
        for (size_t w = W_HITREL; w <= W_MIXPRE; w++) {
            double v = r->med[SC][w] / r->med[AT][w];
            printf("goal %-6s rate: atomtab / string_cache    %5.2f              >= 1.50  %s%s\n",
                   wl_name[w], v, v >= 1.5 ? "met" : "NOT met",
                   w == W_MIXPRE ? " (mix, its new strings made before the clock)" : "");
            print_pair(r, w);
        }
    }
    double o = r->med[AT][W_BYTES];
    printf("goal overhead per distinct atom, glibc malloc %5.2f B            <= 24    %s\n", o,
           o <= 24 ? "met" : "NOT met");
}

static void json_file(const char *path, size_t ntok, size_t distinct, const int *use,
                      const result *r, int first)
{
    printf("%s\n  {\"file\": \"%s\", \"tokens\": %zu, \"distinct\": %zu, \"results\": {",
           first ? "" : ",", path, ntok, distinct);
    int fb = 1;
    for (size_t b = 0; b < NBACKENDS; b++) {
        if (!use[b])
            continue;
        printf("%s\n    \"%s\": {\"release\": %s", fb ? "" : ",", backends[b].name,
               backends[b].release ? "true" : "false");
        fb = 0;
        for (size_t w = 0; w < NWL; w++)
            printf(", \"%s\": {\"median\": %.3f, \"min\": %.3f}", wl_name[w], r->med[b][w],
                   r->min[b][w]);
        printf("}");
    }
    printf("},\n   \"ratios\": {");
    for (size_t w = 0; w < NWL && use[AT]; w++) {
        int f = fastest_peer(r, use, w);
        printf("%s\"%s\": {\"fastest_peer\": \"%s\", \"atomtab_over_fastest\": %.3f", w ? ", " : "",
               wl_name[w], f >= 0 ? backends[f].name : "", f >= 0 ? r->med[AT][w] / r->med[f][w] : 0);
        if (use[SC])
            printf(", \"atomtab_over_string_cache\": %.3f", r->med[AT][w] / r->med[SC][w]);
        printf("}");
    }
    printf("}}");
}

static void usage(void)
{
    fprintf(stderr, "usage: atompeers [--reps 5] [--quick] [--json] [--sc PATH] [--limit N]\n"
                    "                 [--backends atomtab,string_cache,ustr,lasso,glib,libxml2,"
                    "naive] FILE...\n"
                    "       atompeers --child BACKEND FILE [--limit N]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *sc = NULL, *list = NULL;
    size_t limit = SIZE_MAX;
    int reps = 5, json = 0, use[NBACKENDS], i;
    if (argc >= 4 && strcmp(argv[1], "--child") == 0) {
        if (argc == 6 && strcmp(argv[4], "--limit") == 0)
            limit = strtoull(argv[5], NULL, 10);
        else if (argc != 4)
            usage();
        return child(argv[2], argv[3], limit);
    }
    for (i = 1; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "--quick") == 0)
            reps = 1, limit = 50000;
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--limit") == 0 && i + 1 < argc)
            limit = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--sc") == 0 && i + 1 < argc)
            sc = *argv[++i] ? argv[i] : NULL;
        else if (strcmp(argv[i], "--backends") == 0 && i + 1 < argc)
            list = argv[++i];
        else
            usage();
    }
    if (i >= argc || reps < 1 || reps > 99 || limit < 1)
        usage();
    for (size_t b = 0; b < NBACKENDS; b++) {
        size_t l = strlen(backends[b].name);
        int named = !list;
        for (const char *p = list; p && *p; p += strcspn(p, ","), p += *p == ',')
            named |= strcspn(p, ",") == l && strncmp(p, backends[b].name, l) == 0;
        use[b] = named && (backends[b].measure || sc);
    }
    env e;
    get_env(&e, sc);
    if (json) {
        json_env(&e);
        printf("\"reps\": %d, \"files\": [", reps);
    } else {
        printf("atompeers: one thread, same run; backends interleaved, order rotated each "
               "repeat; every backend on glibc malloc\n");
        print_env(&e);
        if (!sc)
            printf("(no --sc: string_cache, ustr and lasso SKIPPED)\n");
    }
    for (int first = 1; i < argc; i++, first = 0) {
        cell cells[NBACKENDS][NWL];
        tokens k;
        size_t chars;
        tokens_load(argv[i], &k, "atompeers");
        size_t n = k.n < limit ? k.n : limit;
        size_t distinct = count_distinct(&k, n, &chars);
        for (size_t b = 0; b < NBACKENDS; b++)
            for (size_t w = 0; w < NWL; w++)
                cells[b][w].v = calloc((size_t)reps, sizeof(double)), cells[b][w].n = 0;
        for (int rep = 0; rep < reps; rep++)
            for (size_t j = 0; j < NBACKENDS; j++) {
                size_t b = (j + (size_t)rep) % NBACKENDS;   /* rotate the order */
                if (use[b])
                    run_child(sc, &backends[b], argv[i], n, distinct, chars, cells[b]);
            }
        result r;
        static double raw[NBACKENDS][NWL][100];   /* each repeat's figure, before median() sorts */
        for (size_t b = 0; b < NBACKENDS; b++)
            for (size_t w = 0; w < NWL; w++)
                memcpy(raw[b][w], cells[b][w].v, cells[b][w].n * sizeof(double));
        for (size_t b = 0; b < NBACKENDS; b++)
            for (size_t w = 0; w < NWL; w++) {
                r.med[b][w] = median(&cells[b][w]);
                r.min[b][w] = cells[b][w].n ? cells[b][w].v[0] : 0;   /* sorted by median() */
                free(cells[b][w].v);
            }
        memset(r.pair, 0, sizeof r.pair);
        for (size_t w = 0; use[AT] && w < NWL; w++) {
            int f = fastest_peer(&r, use, w);
            if ((w == W_HIT || w == W_STREAM) && f >= 0)
                pair_ratio(&r, w, raw[AT][w], raw[f][w], (size_t)reps);
            else if (w >= W_HITREL && w <= W_MIXPRE && use[SC])
                pair_ratio(&r, w, raw[SC][w], raw[AT][w], (size_t)reps);
        }
        if (json) {
            json_file(argv[i], n, distinct, use, &r, first);
        } else {
            print_table(&e, argv[i], n, distinct, static_ops(&k, n), use, &r, reps);
            print_goals(&r, use);
        }
        free(k.text), free(k.s), free(k.len);
    }
    if (json)
        printf("\n]}\n");
    return 0;
}
