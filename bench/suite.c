/* SPDX-License-Identifier: MIT */
/*
** suite.c - atombench: one workload, several interners behind one small
** interface (struct backend), each measured in its own fresh process.
**
** Backends: atomtab (atab_intern / atab_lookup, default options), GLib
** (g_intern_string / g_quark_try_string), libxml2 (xmlDictLookup /
** xmlDictExists) and "naive", a chained hash table with strdup'ed keys
** (FNV-1a, load 1), the baseline any host could write in an hour.
**
** Input: one token per line. Tokens are split once, in place, into
** NUL-terminated strings, so every backend gets (s, len) with s[len] == 0
** and no backend pays for a copy (GLib needs the NUL, the others the
** length): the fairest split we could think of.
**
** Workloads, each in a noinline function (callgrind's --toggle-collect):
**   stream  a fresh table; intern every token in file order
**   hit     the same ops again on the warm table
**   miss    lookup-only of absent strings (each token with its first byte
**           replaced by 0x7f), in stream order, on the warm table
**   repN    one string of N bytes interned once, then interned again and
**           again (a hit), for N in 3 14 15 16 63 64 100 101
**   bytes   bytes per distinct atom: jemalloc stats.allocated (usable
**           sizes) before the table is made and after the stream. This
**           program links jemalloc, so GLib, libxml2 and strdup allocate
**           through it too.
** atomtab keeps the reference each atab_intern returns (as GLib and
** libxml2 have no release): a host holding one reference per token.
**
** The driver runs `atombench --child BACKEND FILE` (this program again,
** through /proc/self/exe) once per backend per repeat, backends
** interleaved and their order rotated each repeat, and prints the median
** and min of the repeats and each peer's ratio to atomtab (peer time /
** atomtab time: above 1, atomtab is faster).
**
** usage: atombench [--reps N] [--json] [--backends a,b,..] [--rep-ops N] FILE...
**        atombench --child BACKEND FILE [--only WORKLOAD] [--len N] [--rep-ops N]
**                  [--seed N]   (atomtab's hash seed: callgrind runs fix it)
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>
#include <jemalloc/jemalloc.h>
#include <libxml/xmlstring.h>
#include <libxml/dict.h>

#include <atomtab.h>

#include "naive.h"
#include "stats.h"
#include "tokens.h"

/* ---- the interface ---- */

typedef struct backend {
    const char *name;
    void *(*create)(void);
    /* s[len] == 0 always. Returns the interned string (never NULL). */
    const void *(*intern)(void *t, const char *s, size_t len);
    /* Lookup only: non-NULL when present, NULL when absent. */
    const void *(*lookup)(void *t, const char *s, size_t len);
    void (*destroy)(void *t);
} backend;

/* atomtab, default options (static sets included once they exist); with
** --seed, a fixed hash seed, so callgrind's counts repeat exactly (the
** default seed is random per table, and probe lengths follow it). */
static int at_fixed_seed;
static uint64_t at_seed;
static void *at_create(void)
{
    atab_options o;
    memset(&o, 0, sizeof o);
    o.flags = at_fixed_seed ? ATAB_FIXED_SEED : 0;
    o.seed = at_seed;
    return atab_table_new(&o);
}
static const void *at_intern(void *t, const char *s, size_t len) { return atab_intern(t, s, len); }
static const void *at_lookup(void *t, const char *s, size_t len) { return atab_lookup(t, s, len); }
static void at_destroy(void *t) { atab_table_free(t); }

/* GLib: one global table (so one process per measurement). */
static void *gl_create(void) { return (void *)1; }
static const void *gl_intern(void *t, const char *s, size_t len)
{
    (void)t; (void)len;
    return g_intern_string(s);
}
static const void *gl_lookup(void *t, const char *s, size_t len)
{
    (void)t; (void)len;
    return (const void *)(uintptr_t)g_quark_try_string(s);   /* 0: absent */
}
static void gl_destroy(void *t) { (void)t; }

/* libxml2's dictionary. */
static void *xd_create(void) { return xmlDictCreate(); }
static const void *xd_intern(void *t, const char *s, size_t len)
{
    return xmlDictLookup(t, (const xmlChar *)s, (int)len);
}
static const void *xd_lookup(void *t, const char *s, size_t len)
{
    return xmlDictExists(t, (const xmlChar *)s, (int)len);
}
static void xd_destroy(void *t) { xmlDictFree(t); }

static const backend backends[] = {
    {"atomtab", at_create, at_intern, at_lookup, at_destroy},
    {"glib", gl_create, gl_intern, gl_lookup, gl_destroy},
    {"libxml2", xd_create, xd_intern, xd_lookup, xd_destroy},
    {"naive", nv_create, nv_intern, nv_lookup, nv_destroy},
};
#define NBACKENDS (sizeof backends / sizeof backends[0])

/* ---- tokens ---- */

/* Reads FILE into NUL-terminated tokens (empty lines skipped). */
static void load(const char *path, tokens *t)
{
    tokens_load(path, t, "atombench");
}

/* The miss set: a copy of the stream with each first byte set to 0x7f. */
static void make_misses(const tokens *in, tokens *out)
{
    size_t bytes = 0;
    for (size_t i = 0; i < in->n; i++)
        bytes += in->len[i] + 1;
    out->text = malloc(bytes);
    out->s = malloc(in->n * sizeof *out->s);
    out->len = malloc(in->n * sizeof *out->len);
    out->n = in->n;
    char *p = out->text;
    for (size_t i = 0; i < in->n; i++) {
        memcpy(p, in->s[i], in->len[i] + 1);
        p[0] = 0x7f;
        out->s[i] = p;
        out->len[i] = in->len[i];
        p += in->len[i] + 1;
    }
}

/* ---- the workloads (noinline: callgrind --toggle-collect=wl_*) ---- */

static volatile uintptr_t sink;

__attribute__((noinline)) void wl_stream(const backend *b, void *t, const tokens *k);
__attribute__((noinline)) void wl_hit(const backend *b, void *t, const tokens *k);
__attribute__((noinline)) size_t wl_miss(const backend *b, void *t, const tokens *k);
__attribute__((noinline)) void wl_repeat(const backend *b, void *t, const char *s,
                                         size_t len, size_t n);

void wl_stream(const backend *b, void *t, const tokens *k)
{
    uintptr_t x = 0;
    for (size_t i = 0; i < k->n; i++)
        x ^= (uintptr_t)b->intern(t, k->s[i], k->len[i]);
    sink = x;
}

void wl_hit(const backend *b, void *t, const tokens *k)
{
    uintptr_t x = 0;   /* the stream's loop, not a tail call (callgrind) */
    for (size_t i = 0; i < k->n; i++)
        x ^= (uintptr_t)b->intern(t, k->s[i], k->len[i]);
    sink = x;
}

size_t wl_miss(const backend *b, void *t, const tokens *k)
{
    size_t found = 0;
    for (size_t i = 0; i < k->n; i++)
        found += b->lookup(t, k->s[i], k->len[i]) != NULL;
    return found;
}

void wl_repeat(const backend *b, void *t, const char *s, size_t len, size_t n)
{
    uintptr_t x = 0;
    for (size_t i = 0; i < n; i++)
        x ^= (uintptr_t)b->intern(t, s, len);
    sink = x;
}

/* Live bytes by jemalloc's count (flush the thread cache, write epoch). */
static size_t allocated(void)
{
    uint64_t epoch = 1;
    size_t v = 0, len = sizeof v;
    mallctl("thread.tcache.flush", NULL, NULL, NULL, 0);
    mallctl("epoch", NULL, NULL, &epoch, sizeof epoch);
    if (mallctl("stats.allocated", &v, &len, NULL, 0) != 0)
        return 0;
    return v;
}

static const size_t rep_lens[] = {3, 14, 15, 16, 63, 64, 100, 101};
#define NLENS (sizeof rep_lens / sizeof rep_lens[0])

/* Workload names, in result order; rep_lens follow "miss". */
static const char *const fixed_wl[] = {"stream", "hit", "miss", "bytes"};
#define NFIXED 4
#define NRESULTS (NFIXED + NLENS)

static const backend *find_backend(const char *name)
{
    for (size_t i = 0; i < NBACKENDS; i++)
        if (strcmp(backends[i].name, name) == 0)
            return &backends[i];
    return NULL;
}

/* A string of n bytes that no corpus holds: "r" then letters. */
static char *rep_string(size_t n)
{
    char *s = malloc(n + 1);
    for (size_t i = 0; i < n; i++)
        s[i] = i == 0 ? '~' : (char)('a' + (i * 7) % 26);
    s[n] = '\0';
    return s;
}

/* The child: one backend, one file, one fresh process. Prints one line:
** "name=ns ..." (bytes: the stream's allocated delta in bytes). With
** `only`, runs just that workload (and the stream it needs first). */
static int child(const char *bname, const char *path, const char *only,
                 size_t only_len, size_t rep_ops)
{
    const backend *b = find_backend(bname);
    tokens k, m;
    if (!b) {
        fprintf(stderr, "atombench: no backend '%s'\n", bname);
        return 2;
    }
    load(path, &k);
    make_misses(&k, &m);
    int all = only == NULL;
    int rep_only = only && strcmp(only, "repeat") == 0;
    size_t before = allocated();
    void *t = b->create();
    double t0 = now_ns();
    if (!rep_only)
        wl_stream(b, t, &k);
    double t1 = now_ns();
    size_t bytes = allocated() - before;
    printf("stream=%.3f bytes=%zu", (t1 - t0) / (double)k.n, bytes);
    if (all || strcmp(only, "hit") == 0) {
        t0 = now_ns();
        wl_hit(b, t, &k);
        printf(" hit=%.3f", (now_ns() - t0) / (double)k.n);
    }
    if (all || strcmp(only, "miss") == 0) {
        t0 = now_ns();
        size_t found = wl_miss(b, t, &m);
        printf(" miss=%.3f", (now_ns() - t0) / (double)m.n);
        if (found) {
            fprintf(stderr, "atombench: %s found %zu absent strings\n", b->name, found);
            return 1;
        }
    }
    for (size_t i = 0; i < NLENS && (all || rep_only); i++) {
        if (rep_only && only_len && rep_lens[i] != only_len)
            continue;
        char *s = rep_string(rep_lens[i]);
        b->intern(t, s, rep_lens[i]);   /* warm */
        t0 = now_ns();
        wl_repeat(b, t, s, rep_lens[i], rep_ops);
        printf(" rep%zu=%.3f", rep_lens[i], (now_ns() - t0) / (double)rep_ops);
        free(s);
    }
    printf(" ops=%zu\n", k.n);
    b->destroy(t);
    return 0;
}

/* ---- the driver ---- */

static double minimum(cell *c)
{
    double m = c->n ? c->v[0] : 0;
    for (size_t i = 1; i < c->n; i++)
        if (c->v[i] < m)
            m = c->v[i];
    return m;
}

static const char *result_name(size_t r, char *buf, size_t size)
{
    if (r < NFIXED)
        return fixed_wl[r];
    snprintf(buf, size, "rep%zu", rep_lens[r - NFIXED]);
    return buf;
}

/* Runs one child and adds its figures to cells[backend][result]. */
static void run_child(const char *self, const char *bname, const char *path,
                      size_t rep_ops, cell *row)
{
    int fd[2];
    char ops[32], line[1024], buf[16];
    snprintf(ops, sizeof ops, "%zu", rep_ops);
    fflush(stdout);
    if (pipe(fd) != 0) {
        perror("pipe");
        exit(1);
    }
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        execl(self, self, "--child", bname, path, "--rep-ops", ops, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    FILE *f = fdopen(fd[0], "r");
    line[0] = ' ';   /* so every key is found as " key=" */
    if (!f || !fgets(line + 1, sizeof line - 1, f))
        line[1] = '\0';
    fclose(f);
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
        fprintf(stderr, "atombench: backend %s failed on %s\n", bname, path);
        exit(1);
    }
    for (size_t r = 0; r < NRESULTS; r++) {
        char key[40];
        snprintf(key, sizeof key, " %s=", result_name(r, buf, sizeof buf));
        char *p = strstr(line, key);
        if (!p)
            continue;
        p = strchr(p, '=') + 1;
        row[r].v[row[r].n++] = strtod(p, NULL);
    }
}

typedef struct summary {
    double med[NBACKENDS][NRESULTS], min[NBACKENDS][NRESULTS];
} summary;

static void print_table(const char *path, size_t ntok, size_t distinct, double avg,
                        const int *use, summary *s, int reps)
{
    char buf[16];
    printf("\n%s: %zu tokens, %zu distinct (%.1f bytes avg), %d repeats, "
           "median (min) ns/op; ratio = peer median / atomtab median\n",
           path, ntok, distinct, avg, reps);
    printf("%-8s", "workload");
    for (size_t b = 0; b < NBACKENDS; b++)
        if (use[b])
            printf(" %24s", backends[b].name);
    printf("\n");
    for (size_t r = 0; r < NRESULTS; r++) {
        const char *name = result_name(r, buf, sizeof buf);
        printf("%-8s", r == 3 ? "B/atom" : name);
        for (size_t b = 0; b < NBACKENDS; b++) {
            if (!use[b])
                continue;
            char c[64];
            double base = s->med[0][r], v = s->med[b][r];
            if (r == 3)
                snprintf(c, sizeof c, "%.2f", v);
            else
                snprintf(c, sizeof c, "%.2f (%.2f)", v, s->min[b][r]);
            if (b > 0 && use[0] && base > 0)
                snprintf(c + strlen(c), sizeof c - strlen(c), " x%.2f", v / base);
            printf(" %24s", c);
        }
        printf("\n");
    }
}

/* The goals, on this file's medians: atomtab at least 2x as fast as the
** fastest peer on stream and hit, within 2x of it on miss; its rep101 at
** most 2x its rep3. */
static void print_goals(summary *s, const int *use)
{
    static const size_t which[] = {0, 1, 2};
    if (!use[0])
        return;
    for (size_t i = 0; i < 3; i++) {
        size_t r = which[i];
        double best = 0;
        const char *bn = "-";
        for (size_t b = 1; b < NBACKENDS; b++)
            if (use[b] && (best == 0 || s->med[b][r] < best))
                best = s->med[b][r], bn = backends[b].name;
        if (best == 0)
            continue;
        double ratio = best / s->med[0][r];
        if (r == 2)
            printf("goal %-6s atomtab within 2x of fastest peer (%s): atomtab/peer %.2f -> %s\n",
                   fixed_wl[r], bn, 1 / ratio, 1 / ratio <= 2 ? "met" : "MISSED");
        else
            printf("goal %-6s fastest peer (%s) / atomtab = %.2f (goal >= 2) -> %s\n",
                   fixed_wl[r], bn, ratio, ratio >= 2 ? "met" : "MISSED");
    }
    double r3 = s->med[0][NFIXED], r101 = s->med[0][NRESULTS - 1];
    printf("goal rep101/rep3 (atomtab) = %.2f (goal <= 2) -> %s\n", r101 / r3,
           r101 <= 2 * r3 ? "met" : "MISSED");
}

static void json_file(FILE *out, const char *path, size_t ntok, size_t distinct,
                      const int *use, summary *s, int first)
{
    char buf[16];
    fprintf(out, "%s\n  {\"file\": \"%s\", \"tokens\": %zu, \"distinct\": %zu, \"results\": {",
            first ? "" : ",", path, ntok, distinct);
    int fb = 1;
    for (size_t b = 0; b < NBACKENDS; b++) {
        if (!use[b])
            continue;
        fprintf(out, "%s\n    \"%s\": {", fb ? "" : ",", backends[b].name);
        fb = 0;
        for (size_t r = 0; r < NRESULTS; r++) {
            fprintf(out, "%s\"%s\": {\"median\": %.3f, \"min\": %.3f", r ? ", " : "",
                    r == 3 ? "bytes_per_atom" : result_name(r, buf, sizeof buf),
                    s->med[b][r], s->min[b][r]);
            if (b > 0 && use[0] && s->med[0][r] > 0)   /* peer / atomtab */
                fprintf(out, ", \"ratio_to_atomtab\": %.3f", s->med[b][r] / s->med[0][r]);
            fprintf(out, "}");
        }
        fprintf(out, "}");
    }
    fprintf(out, "}}");
}

int main(int argc, char **argv)
{
    const char *self = "/proc/self/exe", *only = NULL, *list = NULL;
    size_t rep_ops = 1000000, only_len = 0;
    int reps = 5, json = 0, use[NBACKENDS];
    int i = 1;
    if (argc > 3 && strcmp(argv[1], "--child") == 0) {
        for (i = 4; i + 1 < argc; i += 2) {
            if (strcmp(argv[i], "--only") == 0)
                only = argv[i + 1];
            else if (strcmp(argv[i], "--len") == 0)
                only_len = strtoull(argv[i + 1], NULL, 10);
            else if (strcmp(argv[i], "--rep-ops") == 0)
                rep_ops = strtoull(argv[i + 1], NULL, 10);
            else if (strcmp(argv[i], "--seed") == 0)
                at_fixed_seed = 1, at_seed = strtoull(argv[i + 1], NULL, 0);
        }
        return child(argv[2], argv[3], only, only_len, rep_ops);
    }
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--rep-ops") == 0 && i + 1 < argc)
            rep_ops = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--backends") == 0 && i + 1 < argc)
            list = argv[++i];
        else
            break;
    }
    if (i >= argc || reps < 1 || reps > 1000) {
        fprintf(stderr, "usage: atombench [--reps N] [--json] [--backends atomtab,glib,"
                        "libxml2,naive] [--rep-ops N] FILE...\n"
                        "       atombench --child BACKEND FILE [--only stream|hit|miss|"
                        "repeat] [--len N] [--rep-ops N] [--seed N]\n");
        return 2;
    }
    for (size_t b = 0; b < NBACKENDS; b++) {
        const char *p = list ? strstr(list, backends[b].name) : NULL;
        size_t l = strlen(backends[b].name);
        use[b] = !list || (p && (p[l] == '\0' || p[l] == ','));
    }
    char cpu[512];
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_model(cpu, sizeof cpu);
    FILE *jout = json ? stdout : NULL;
    if (json) {
        fprintf(jout, "{\"machine\": {\"nproc\": %ld, \"cpu\": \"%s\"}, \"reps\": %d, "
                      "\"unit\": \"ns/op\", \"files\": [", ncpu, cpu, reps);
    } else {
        printf("atombench: %ld CPUs, %s; jemalloc for every backend\n", ncpu, cpu);
    }
    for (int first = 1; i < argc; i++, first = 0) {
        cell cells[NBACKENDS][NRESULTS];
        tokens k;
        double avg;
        load(argv[i], &k);
        size_t chars, distinct = count_distinct(&k, k.n, &chars);
        avg = distinct ? (double)(chars - distinct) / (double)distinct : 0;   /* chars alone */
        for (size_t b = 0; b < NBACKENDS; b++)
            for (size_t r = 0; r < NRESULTS; r++)
                cells[b][r].v = calloc((size_t)reps, sizeof(double)), cells[b][r].n = 0;
        for (int rep = 0; rep < reps; rep++)
            for (size_t j = 0; j < NBACKENDS; j++) {
                size_t b = (j + (size_t)rep) % NBACKENDS;   /* rotate the order */
                if (use[b])
                    run_child(self, backends[b].name, argv[i], rep_ops, cells[b]);
            }
        summary s;
        for (size_t b = 0; b < NBACKENDS; b++)
            for (size_t r = 0; r < NRESULTS; r++) {
                s.med[b][r] = median(&cells[b][r]);
                s.min[b][r] = minimum(&cells[b][r]);
                if (r == 3)
                    s.med[b][r] /= (double)distinct, s.min[b][r] /= (double)distinct;
                free(cells[b][r].v);
            }
        if (json) {
            json_file(jout, argv[i], k.n, distinct, use, &s, first);
        } else {
            print_table(argv[i], k.n, distinct, avg, use, &s, reps);
            print_goals(&s, use);
        }
        free(k.text), free(k.s), free(k.len);
    }
    if (json)
        fprintf(jout, "\n]}\n");
    return 0;
}
