/* SPDX-License-Identifier: MIT */
/*
** probes.c - atomprobes: the cost of a repeated hit, string by string, on
** a loaded table (the goal: max/median <= 1.3), public API only.
**
** The table (fixed hash seed, --seed) is warmed with the token file (every
** distinct token interned once and held), then --strings new strings are
** interned and held: from a fixed generator seed, 8-16 bytes, and every
** 20th one 100 bytes. Each string is then hit (atab_intern + atab_release)
** --reps times, after one untimed hit.
**
** Under callgrind (tools/probes-callgrind.sh), each string's hits are one
** dump, labelled "probe INDEX LEN", run with --collect-atstart=no
** --toggle-collect=probe_hit: a dump holds exactly its --reps calls of
** probe_hit (the hit plus the wrapper's own few instructions), so Ir per
** hit is exact and repeatable. A last dump, "corpus N", holds one hit of
** each of the file's first N tokens. Run alone, it times each string
** instead (best of 5 runs of --reps * 20 hits) and prints ns per hit.
**
** usage: atomprobes [--strings 1000] [--reps 100] [--seed 1] FILE
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <atomtab.h>

#include "tokens.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_DUMP_STATS_AT   /* no valgrind headers: timing only */
#define RUNNING_ON_VALGRIND 0
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(label) ((void)(label))
#endif

enum { LONG_LEN = 100, LONG_EVERY = 20, CORPUS_HITS = 100000, NS_ROUNDS = 5 };

static int failed;

/* One hit: what callgrind counts (--toggle-collect=probe_hit). */
__attribute__((noinline)) static void probe_hit(atab_table *t, const char *s, size_t len)
{
    const atab_atom *a = atab_intern(t, s, len);
    if (!a || atab_release(t, a) != ATAB_OK)
        failed = 1;
}

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* String i of the fixed sequence into buf (NUL-terminated); its length. */
static size_t gen_string(uint64_t *rng, size_t i, char *buf)
{
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t len = i % LONG_EVERY == LONG_EVERY - 1 ? LONG_LEN : 8 + splitmix64(rng) % 9;
    for (size_t j = 0; j < len; j++)
        buf[j] = alphabet[splitmix64(rng) % (sizeof alphabet - 1)];
    buf[len] = '\0';
    return len;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Best of NS_ROUNDS runs of n hits of s: ns per hit. */
static double time_hits(atab_table *t, const char *s, size_t len, int n)
{
    double best = 1e30;
    for (int r = 0; r < NS_ROUNDS; r++) {
        double t0 = now_ns();
        for (int i = 0; i < n; i++)
            probe_hit(t, s, len);
        double ns = (now_ns() - t0) / n;
        best = ns < best ? ns : best;
    }
    return best;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Prints min / median / p99 / max and max/median of v[0..n), sorted here. */
static void summary(const char *name, double *v, size_t n)
{
    if (n == 0)
        return;
    qsort(v, n, sizeof *v, cmp_dbl);
    double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    size_t r99 = (size_t)(0.99 * (double)n + 0.999999);
    printf("%-6s %5zu %8.1f %8.1f %8.1f %8.1f %10.2f\n", name, n, v[0], med, v[r99 - 1],
           v[n - 1], v[n - 1] / med);
}

int main(int argc, char **argv)
{
    size_t nstr = 1000;
    int reps = 100, i;
    uint64_t seed = 1;
    for (i = 1; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (strcmp(argv[i], "--strings") == 0 && i + 1 < argc)
            nstr = (size_t)strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 0);
        else
            break;
    }
    if (i + 1 != argc || nstr == 0 || reps < 1) {
        fprintf(stderr, "usage: atomprobes [--strings 1000] [--reps 100] [--seed 1] FILE\n");
        return 2;
    }
    tokens k;
    tokens_load(argv[i], &k, "atomprobes");
    atab_options o = {.flags = ATAB_FIXED_SEED, .seed = seed};
    atab_table *t = atab_table_new(&o);
    char *strs = malloc(nstr * (LONG_LEN + 1));
    size_t *lens = malloc(nstr * sizeof *lens);
    if (!t || !strs || !lens)
        return fprintf(stderr, "atomprobes: out of memory\n"), 1;
    tokens_warm(t, &k, "atomprobes");   /* every distinct token held once */
    uint64_t rng = 0x70726f6265730001u;   /* the strings' fixed seed */
    for (size_t j = 0; j < nstr; j++) {   /* new strings, interned and held */
        char *s = strs + j * (LONG_LEN + 1);
        const atab_atom *old;
        do {   /* a string already in the table would not be new: draw again */
            lens[j] = gen_string(&rng, j, s);
            if ((old = atab_lookup(t, s, lens[j])) != NULL)
                atab_release(t, old);
        } while (old);
        if (!atab_intern(t, s, lens[j]))
            return fprintf(stderr, "atomprobes: %s\n", atab_strerror(atab_last_error())), 1;
    }
    int vg = RUNNING_ON_VALGRIND;
    double *ns = malloc(nstr * sizeof *ns), *ns_long = malloc(nstr * sizeof *ns);
    size_t n_short = 0, n_long = 0;
    char label[64];
    for (size_t j = 0; j < nstr; j++) {
        const char *s = strs + j * (LONG_LEN + 1);
        probe_hit(t, s, lens[j]);   /* untimed: the first hit after the insert */
        if (vg) {
            CALLGRIND_ZERO_STATS;
            for (int r = 0; r < reps; r++)
                probe_hit(t, s, lens[j]);
            snprintf(label, sizeof label, "probe %zu %zu", j, lens[j]);
            CALLGRIND_DUMP_STATS_AT(label);
        } else {
            double v = time_hits(t, s, lens[j], reps * 20);
            if (lens[j] == LONG_LEN)
                ns_long[n_long++] = v;
            else
                ns[n_short++] = v;
        }
    }
    size_t nc = k.n < CORPUS_HITS ? k.n : CORPUS_HITS;
    double t0 = now_ns();
    if (vg)
        CALLGRIND_ZERO_STATS;
    for (size_t j = 0; j < nc; j++)
        probe_hit(t, k.s[j], k.len[j]);
    double corpus_ns = (now_ns() - t0) / (double)nc;
    if (vg) {
        snprintf(label, sizeof label, "corpus %zu", nc);
        CALLGRIND_DUMP_STATS_AT(label);
    }
    if (failed)
        return fprintf(stderr, "atomprobes: a hit failed\n"), 1;
    atab_stats st;
    atab_get_stats(t, &st);
    printf("atomprobes: %s, %zu tokens; %zu new strings (8-16 bytes, every %dth %d bytes) "
           "after the warm-up; table seed %llu; %zu dynamic atoms in %zu slots (load %.2f)\n",
           argv[i], k.n, nstr, LONG_EVERY, LONG_LEN, (unsigned long long)seed, st.atoms,
           st.capacity, st.capacity ? (double)(st.atoms + st.statics_seen) / (double)st.capacity : 0);
    if (vg) {
        printf("atomprobes: under callgrind: one dump per string ('probe INDEX LEN', %d hits"
               " each) and 'corpus %zu'; tools/probes-callgrind.sh reads them\n", reps, nc);
    } else {
        printf("ns per hit (intern + release), best of %d x %d hits per string:\n"
               "%-6s %5s %8s %8s %8s %8s %10s\n", NS_ROUNDS, reps * 20,
               "class", "n", "min", "median", "p99", "max", "max/median");
        summary("short", ns, n_short);
        summary("long", ns_long, n_long);
        printf("corpus hit average (first %zu tokens, once each): %.1f ns\n", nc, corpus_ns);
    }
    atab_table_free(t);
    free(strs);
    free(lens);
    free(ns);
    free(ns_long);
    free(k.text);
    free(k.s);
    free(k.len);
    return 0;
}
