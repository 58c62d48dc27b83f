/* SPDX-License-Identifier: MIT */
/*
** abtest.c - atomabtest: two builds of atomtab in one process, their
** rounds alternated, so that a shared machine's slow spells fall on both.
** Build A is linked as it is; build B with every global symbol it defines
** renamed B_... (tools/ab.sh does both). Each round runs one workload on
** one build; the rounds go A B B A A B ..., and each figure is the best and
** the mean of a build's rounds, beside B/A.
**
** Workloads (ns per op), each over every token of the file:
**   stream  a fresh table per round, every token in file order
**   hit     the same on a warm table (one per build, made before the
**           rounds); references kept
**   hitrel  each op an intern and its release, on the warm table
**   mix     as hitrel, but op j % 8 == 7 interns a new string ("mix-0-N")
**
** usage: atomabtest FILE [--rounds 10] [--only stream,hit,hitrel,mix]
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <atomtab.h>

#include "tokens.h"

atab_table *B_atab_table_new(const atab_options *opts);
void B_atab_table_free(atab_table *t);
const atab_atom *B_atab_intern(atab_table *t, const char *s, size_t len);
int B_atab_release(atab_table *t, const atab_atom *a);

typedef struct build {
    atab_table *(*table_new)(const atab_options *opts);
    void (*table_free)(atab_table *t);
    const atab_atom *(*intern)(atab_table *t, const char *s, size_t len);
    int (*release)(atab_table *t, const atab_atom *a);
    atab_table *warm;
} build;

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

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* One round of workload w on build b: ns per op. */
static double round_ns(const build *b, const tokens *k, const char *w, unsigned long long *fresh)
{
    uintptr_t x = 0;
    atab_table *t = strcmp(w, "stream") == 0 ? b->table_new(NULL) : b->warm;
    double t0 = now_ns();
    if (strcmp(w, "stream") == 0 || strcmp(w, "hit") == 0) {
        for (size_t i = 0; i < k->n; i++)
            x ^= (uintptr_t)b->intern(t, k->s[i], k->len[i]);
    } else if (strcmp(w, "hitrel") == 0) {
        for (size_t i = 0; i < k->n; i++)
            b->release(t, b->intern(t, k->s[i], k->len[i]));
    } else {
        char buf[32];
        for (size_t i = 0; i < k->n; i++) {
            if ((i & 7) == 7) {
                int n = snprintf(buf, sizeof buf, "mix-0-%llu", (*fresh)++);
                b->release(t, b->intern(t, buf, (size_t)n));
            } else {
                b->release(t, b->intern(t, k->s[i], k->len[i]));
            }
        }
    }
    double ns = (now_ns() - t0) / (double)k->n;
    sink = x;
    if (t != b->warm)
        b->table_free(t);
    return ns;
}

int main(int argc, char **argv)
{
    const char *file = NULL, *only = "stream,hit,hitrel,mix";
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
        fprintf(stderr, "usage: atomabtest FILE [--rounds 10] [--only stream,hit,hitrel,mix]\n");
        return 2;
    }
    tokens k;
    tokens_load(file, &k, "atomabtest");
    build b[2] = {
        {atab_table_new, atab_table_free, atab_intern, atab_release, NULL},
        {B_atab_table_new, B_atab_table_free, B_atab_intern, B_atab_release, NULL},
    };
    for (int v = 0; v < 2; v++) {
        b[v].warm = b[v].table_new(NULL);
        for (size_t i = 0; i < k.n; i++)
            b[v].intern(b[v].warm, k.s[i], k.len[i]);
    }
    printf("%s: %zu tokens; %d rounds a build, alternated A B B A ...; ns per op\n", file, k.n,
           rounds);
    printf("%-8s %10s %10s %10s %10s %9s %9s\n", "workload", "A best", "A mean", "B best", "B mean",
           "B/A best", "B/A mean");
    static const char *const all[] = {"stream", "hit", "hitrel", "mix"};
    unsigned long long fresh[2] = {0, 0};
    for (size_t w = 0; w < sizeof all / sizeof *all; w++) {
        if (!listed(only, all[w]))
            continue;
        double best[2] = {1e300, 1e300}, sum[2] = {0, 0};
        for (int r = 0; r < 2 * rounds; r++) {
            int v = (r & 1) ^ ((r >> 1) & 1);
            double ns = round_ns(&b[v], &k, all[w], &fresh[v]);
            best[v] = ns < best[v] ? ns : best[v];
            sum[v] += ns;
        }
        printf("%-8s %10.2f %10.2f %10.2f %10.2f %9.3f %9.3f\n", all[w], best[0], sum[0] / rounds,
               best[1], sum[1] / rounds, best[1] / best[0], sum[1] / sum[0]);
    }
    for (int v = 0; v < 2; v++)
        b[v].table_free(b[v].warm);
    free(k.text), free(k.s), free(k.len);
    return 0;
}
