/* SPDX-License-Identifier: MIT */
/*
** transient.c - atomtransient: what one transient atom costs (a new string
** interned and released at once, its share of the sweep that frees it
** included), on one thread, as the `mix` workload of threads.c runs it:
** 7 ops in 8 intern and release a corpus token (every distinct token held,
** as threads.c's warm-up holds them), the 8th a new string "mix-0-N" made
** by snprintf.
**
** Three loops, each a function of its own: run_hit (hits only), run_mix
** (the mix) and run_fmt (the snprintf calls alone). A transient atom costs
** 8 x mix - 7 x hit - fmt per 8 ops: in ns (the best of --reps runs), and
** in instructions under callgrind (tools/transient-callgrind.sh collects
** the three functions, after a warm-up that reaches the steady state of
** sweeps). A fourth, run_alone, interns and releases ops / 8 new strings
** in a row ("new-R-N", made before the clock starts): a transient atom
** with no hits between.
**
** --seed N fixes the table's hash seed (ATAB_FIXED_SEED), which places
** every key and so moves the count of instructions a little from one seed
** to the next: callgrind's counts then repeat exactly.
**
** usage: atomtransient [--ops 2000000] [--reps 7] [--warm 400000] [--seed N] FILE
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <atomtab.h>

#include "tokens.h"

static atab_table *g_t;
static tokens g_k;
static size_t g_i, g_fresh;
static char g_buf[64];
static char (*g_new)[24];   /* run_alone's strings */
static size_t *g_new_len;

static inline void op(int fresh)
{
    const atab_atom *a;
    if (fresh) {
        int n = snprintf(g_buf, sizeof g_buf, "mix-%d-%zu", 0, g_fresh++);
        a = atab_intern(g_t, g_buf, (size_t)n);
    } else {
        a = atab_intern(g_t, g_k.s[g_i], g_k.len[g_i]);
        if (++g_i == g_k.n)
            g_i = 0;
    }
    if (!a || atab_release(g_t, a) != ATAB_OK) {
        fprintf(stderr, "atomtransient: %s\n", atab_strerror(atab_last_error()));
        exit(1);
    }
}

/* Extern, so that callgrind finds them by these names. */
void run_hit(long n);
void run_mix(long n);
void run_fmt(long n);
void run_alone(long n);

__attribute__((noinline)) void run_hit(long n)
{
    for (long i = 0; i < n; i++)
        op(0);
}

__attribute__((noinline)) void run_mix(long n)
{
    for (long i = 0; i < n; i++)
        op((i & 7) == 7);
}

__attribute__((noinline)) void run_fmt(long n)
{
    for (long i = 0; i < n; i++)
        if ((i & 7) == 7) {
            snprintf(g_buf, sizeof g_buf, "mix-%d-%zu", 0, g_fresh++);
            __asm__ volatile("" ::: "memory");
        }
}

__attribute__((noinline)) void run_alone(long n)
{
    for (long i = 0; i < n; i++) {
        const atab_atom *a = atab_intern(g_t, g_new[i], g_new_len[i]);
        if (!a || atab_release(g_t, a) != ATAB_OK) {
            fprintf(stderr, "atomtransient: %s\n", atab_strerror(atab_last_error()));
            exit(1);
        }
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    long ops = 2000000, warm = 400000;
    int reps = 7, i;
    atab_options o = {0};
    for (i = 1; i + 1 < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
        if (strcmp(argv[i], "--ops") == 0)
            ops = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--reps") == 0)
            reps = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--warm") == 0)
            warm = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--seed") == 0)
            o.flags = ATAB_FIXED_SEED, o.seed = strtoull(argv[i + 1], NULL, 0);
        else
            break;
    }
    if (i + 1 != argc || ops < 8 || reps < 1) {
        fprintf(stderr, "usage: atomtransient [--ops 2000000] [--reps 7] [--warm 400000] "
                        "[--seed N] FILE\n");
        return 2;
    }
    tokens_load(argv[i], &g_k, "atomtransient");
    if (!(g_t = atab_table_new(o.flags ? &o : NULL)))
        return fprintf(stderr, "atomtransient: %s\n", atab_strerror(atab_last_error())), 1;
    tokens_warm(g_t, &g_k, "atomtransient");   /* every distinct token held once */
    for (long w = 0; w < warm; w++)   /* sweeps in their steady state */
        op((w & 7) == 7);
    long n_new = ops / 8;
    g_new = malloc((size_t)n_new * sizeof *g_new);
    g_new_len = malloc((size_t)n_new * sizeof *g_new_len);
    if (!g_new || !g_new_len)
        return fprintf(stderr, "atomtransient: out of memory\n"), 1;
    double best[4] = {1e30, 1e30, 1e30, 1e30};
    for (int r = 0; r < reps; r++) {
        for (long k = 0; k < n_new; k++)
            g_new_len[k] = (size_t)snprintf(g_new[k], sizeof g_new[k], "new-%d-%ld", r, k);
        double t0 = now_s();
        run_hit(ops);
        double t1 = now_s();
        run_mix(ops);
        double t2 = now_s();
        run_fmt(ops);
        double t3 = now_s();
        run_alone(n_new);
        double t4 = now_s();
        double v[4] = {t1 - t0, t2 - t1, t3 - t2, t4 - t3};
        for (int k = 0; k < 4; k++)
            if (v[k] < best[k])
                best[k] = v[k];
    }
    double hit = best[0] * 1e9 / (double)ops, mix = best[1] * 1e9 / (double)ops;
    double fmt = best[2] * 1e9 / (double)(ops / 8);
    printf("ops=%ld hit %.2f ns/op, mix %.2f ns/op, snprintf %.2f ns; transient atom %.1f ns, "
           "alone %.1f ns (best of %d)\n", ops, hit, mix, fmt, 8 * mix - 7 * hit - fmt,
           best[3] * 1e9 / (double)n_new, reps);
    atab_table_free(g_t);
    free(g_new);
    free(g_new_len);
    return 0;
}
