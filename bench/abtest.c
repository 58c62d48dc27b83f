/* SPDX-License-Identifier: MIT */
/*
** abtest.c - atomabtest: two builds of atomtab in one process, their
** rounds alternated, so that a shared machine's slow spells fall on both.
** Build A is linked as it is; build B with every global symbol it defines
** renamed B_... (tools/ab.sh does both). Each round runs one workload on
** one build, as many passes over the file as make it last 40 ms at least
** (a shared machine's slow spells are longer than one short round); the
** rounds go A B B A A B ..., and each figure is the best and the mean of a
** build's rounds, beside B/A.
**
** Workloads (ns per op), each over every token of the file:
**   stream  a fresh table per round, every token in file order
**   hit     the same on a warm table (one per build, made before the
**           rounds); references kept
**   hitrel  each op an intern and its release, on the warm table
**   mix     as hitrel, but op j % 8 == 7 interns a new string ("mix-0-N")
**   mix2    mix on two threads at once, on the warm table, each with new
**           strings of its own ("mix-1-N", "mix-2-N"): CPU ns per op, both
**           threads' CPU time over both threads' ops (the 2-thread cost)
**
** usage: atomabtest FILE [--rounds 10] [--only stream,hit,hitrel,mix,mix2]
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomtab.h>

#include "stats.h"   /* now_ns; tokens.h */

atab_table *B_atab_table_new(const atab_options *opts);
void B_atab_table_free(atab_table *t);
const atab_atom *B_atab_intern(atab_table *t, const char *s, size_t len);
int B_atab_release(atab_table *t, const atab_atom *a);

static volatile uintptr_t sink;

/* Is w one of the comma list's items? */
static int listed(const char *list, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = list;; p++) {
        size_t m = strcspn(p, ",");
        if (m == n && strncmp(p, w, n) == 0)
            return 1;
        p += m;
        if (!*p)
            return 0;
    }
}

#define ROUND_NS 40e6   /* a round lasts this long at least: passes over the file */

enum { STREAM, HIT, HITREL, MIX, MIX2, WORKLOADS };
static const char *const workload_names[WORKLOADS] = {"stream", "hit", "hitrel", "mix", "mix2"};

/* This thread's CPU time, ns. */
static double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* One of mix2's threads: its table, file and name space in; its CPU ns
** for one pass out. */
typedef struct mix_arg {
    atab_table *t;
    const tokens *k;
    int id;
    unsigned long long fresh;
    double cpu;
} mix_arg;

/* P_round(k, w, warm, fresh, passes): one round of workload w on build P,
** `passes` passes over the file, in ns per op; its functions are called
** directly, as a host calls them, on the warm table or, for the stream, a
** fresh one each pass (made and freed outside the clock). P_warm(k): the
** warm table. */
#define BUILD_ROUND(P, NEW, FREE, INTERN, RELEASE)                                        \
    static void P##_mix(atab_table *t, const tokens *k, int id, unsigned long long *fresh)  \
    {                                                                                   \
        char buf[32];                                                                   \
        for (size_t i = 0; i < k->n; i++) {                                             \
            if ((i & 7) == 7) {                                                         \
                int n = snprintf(buf, sizeof buf, "mix-%d-%llu", id, (*fresh)++);       \
                RELEASE(t, INTERN(t, buf, (size_t)n));                                  \
            } else {                                                                    \
                RELEASE(t, INTERN(t, k->s[i], k->len[i]));                              \
            }                                                                           \
        }                                                                               \
    }                                                                                   \
    static void *P##_mix_thread(void *p)                                                \
    {                                                                                   \
        mix_arg *m = p;                                                                 \
        double c0 = cpu_ns();                                                           \
        P##_mix(m->t, m->k, m->id, &m->fresh);                                          \
        m->cpu = cpu_ns() - c0;                                                         \
        return NULL;                                                                    \
    }                                                                                   \
    /* One pass of mix on each of two threads: their CPU ns together, per             \
    ** thread-pass (so that ns / ops is CPU ns per op). */                              \
    static double P##_mix2(atab_table *t, const tokens *k, unsigned long long *fresh)   \
    {                                                                                   \
        mix_arg m[2] = {{t, k, 1, *fresh, 0}, {t, k, 2, *fresh, 0}};                    \
        pthread_t th[2];                                                                \
        for (int i = 0; i < 2; i++)                                                     \
            if (pthread_create(&th[i], NULL, P##_mix_thread, &m[i]) != 0)               \
                abort();                                                                \
        for (int i = 0; i < 2; i++)                                                     \
            pthread_join(th[i], NULL);                                                  \
        *fresh = m[0].fresh;                                                            \
        return (m[0].cpu + m[1].cpu) / 2;                                               \
    }                                                                                   \
    __attribute__((noinline)) static double P##_round(const tokens *k, int w,            \
                                                      atab_table *warm,                 \
                                                      unsigned long long *fresh,        \
                                                      int passes)                       \
    {                                                                                   \
        uintptr_t x = 0;                                                                \
        double ns = 0;                                                                  \
        for (int pass = 0; pass < passes; pass++) {                                     \
            atab_table *t = w == STREAM ? NEW(NULL) : warm;                             \
            double t0 = now_ns(), cpu = -1;                                             \
            if (w == STREAM || w == HIT) {                                              \
                for (size_t i = 0; i < k->n; i++)                                       \
                    x ^= (uintptr_t)INTERN(t, k->s[i], k->len[i]);                      \
            } else if (w == HITREL) {                                                   \
                for (size_t i = 0; i < k->n; i++)                                       \
                    RELEASE(t, INTERN(t, k->s[i], k->len[i]));                          \
            } else if (w == MIX) {                                                      \
                P##_mix(t, k, 0, fresh);                                                \
            } else {                                                                    \
                cpu = P##_mix2(t, k, fresh);                                            \
            }                                                                           \
            ns += cpu >= 0 ? cpu : now_ns() - t0;   /* mix2: CPU, not wall */          \
            if (t != warm)                                                              \
                FREE(t);                                                                \
        }                                                                               \
        sink = x;                                                                       \
        return ns / ((double)k->n * passes);                                            \
    }                                                                                   \
    static atab_table *P##_warm(const tokens *k)                                        \
    {                                                                                   \
        atab_table *t = NEW(NULL);                                                      \
        for (size_t i = 0; t && i < k->n; i++)                                          \
            INTERN(t, k->s[i], k->len[i]);                                              \
        return t;                                                                       \
    }

BUILD_ROUND(a, atab_table_new, atab_table_free, atab_intern, atab_release)
BUILD_ROUND(b, B_atab_table_new, B_atab_table_free, B_atab_intern, B_atab_release)

int main(int argc, char **argv)
{
    const char *file = NULL, *only = "stream,hit,hitrel,mix,mix2";
    int rounds = 10;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else
            file = argv[i];
    }
    if (!file || rounds < 1) {
        fprintf(stderr, "usage: atomabtest FILE [--rounds 10] [--only stream,hit,hitrel,mix,mix2]\n");
        return 2;
    }
    tokens k;
    tokens_load(file, &k, "atomabtest");
    atab_table *warm[2] = {a_warm(&k), b_warm(&k)};
    if (!warm[0] || !warm[1]) {
        fprintf(stderr, "atomabtest: %s\n", atab_strerror(atab_last_error()));
        return 1;
    }
    printf("%s: %zu tokens; %d rounds a build of 40 ms or more, alternated A B B A ...; "
           "ns per op\n", file, k.n, rounds);
    printf("%-8s %10s %10s %10s %10s %9s %9s\n", "workload", "A best", "A mean", "B best", "B mean",
           "B/A best", "B/A mean");
    unsigned long long fresh[2] = {0, 0};
    for (int w = 0; w < WORKLOADS; w++) {
        if (!listed(only, workload_names[w]))
            continue;
        /* a round of at least ROUND_NS, by a first pass of each (not counted) */
        double once = a_round(&k, w, warm[0], &fresh[0], 1) + b_round(&k, w, warm[1], &fresh[1], 1);
        int passes = (int)(ROUND_NS / (once / 2 * (double)k.n)) + 1;
        double best[2] = {1e300, 1e300}, sum[2] = {0, 0};
        for (int r = 0; r < 2 * rounds; r++) {
            int v = (r & 1) ^ ((r >> 1) & 1);
            double ns = v ? b_round(&k, w, warm[1], &fresh[1], passes)
                          : a_round(&k, w, warm[0], &fresh[0], passes);
            best[v] = ns < best[v] ? ns : best[v];
            sum[v] += ns;
        }
        printf("%-8s %10.2f %10.2f %10.2f %10.2f %9.3f %9.3f\n", workload_names[w], best[0],
               sum[0] / rounds, best[1], sum[1] / rounds, best[1] / best[0], sum[1] / sum[0]);
    }
    atab_table_free(warm[0]);
    B_atab_table_free(warm[1]);
    free(k.text), free(k.s), free(k.len);
    return 0;
}
